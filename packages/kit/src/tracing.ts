import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from "@opentelemetry/api";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { NodeSDK } from "@opentelemetry/sdk-node";
import type { Env } from "./config.js";

export { SpanKind, type Span };

/** What `startTracing` hands back: `shutdown` flushes and stops the SDK it started (nothing when tracing is off or was already on). */
export interface Tracing {
  readonly enabled: boolean;
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /**
   * Span processors to use instead of the OTLP exporter (tests: a SimpleSpanProcessor over an
   * in-memory exporter); with them tracing is on whatever the environment says.
   */
  spanProcessors?: SpanProcessor[];
}

let active: { sdk: NodeSDK; service: string } | undefined;
/** Read through a call: a concurrent start may set `active` while this one awaits its imports. */
const isActive = (): boolean => active !== undefined;

const OFF: Tracing = { enabled: false, shutdown: async () => undefined };

/**
 * Turns OpenTelemetry tracing on for this process: with `OTEL_EXPORTER_OTLP_ENDPOINT` set,
 * spans go to it over OTLP/HTTP (the exporter reads the usual `OTEL_EXPORTER_OTLP_*`
 * variables); without it (and without `options.spanProcessors`) nothing is started and the
 * API's no-op tracer makes every span below free. W3C trace context (`traceparent`) is the
 * propagation format. Once per process: a second call (the all-in-one process starts the
 * services and the gateway) keeps the first SDK and gets a handle whose shutdown does nothing.
 *
 * The SDK, the exporter and the propagator are loaded here, only when tracing is on: a
 * process without an endpoint never loads them (about 25 MB of resident memory and a
 * quarter of a second of start that a service with tracing off would otherwise pay).
 */
export async function startTracing(serviceName: string, env: Env = process.env, options: TracingOptions = {}): Promise<Tracing> {
  if (active) return { enabled: true, shutdown: async () => undefined };
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!options.spanProcessors && !endpoint) return OFF;
  if (env.OTEL_SDK_DISABLED === "true") return OFF;
  const [{ NodeSDK }, { W3CTraceContextPropagator }, exporter] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    import("@opentelemetry/core"),
    options.spanProcessors ? undefined : import("@opentelemetry/exporter-trace-otlp-http"),
  ]);
  // A concurrent start finished first (the all-in-one starts the services and the gateway together).
  if (isActive()) return { enabled: true, shutdown: async () => undefined };
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || serviceName,
    autoDetectResources: false,
    instrumentations: [],
    textMapPropagator: new W3CTraceContextPropagator(),
    // Traces only: no log or metric pipeline (metrics stay on Prometheus, logs on stdout).
    logRecordProcessors: [],
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : { traceExporter: new exporter!.OTLPTraceExporter() }),
  });
  sdk.start();
  const mine = { sdk, service: serviceName };
  active = mine;
  return {
    enabled: true,
    async shutdown() {
      if (active !== mine) return;
      active = undefined;
      await sdk.shutdown().catch(() => undefined);
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

const TRACER = "@payments/kit";

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The parent; the active context when not given. */
  parent?: Context;
}

/**
 * Runs fn inside a new active span, ending it when fn settles; an exception marks the span
 * as failed (and is rethrown). With tracing off the span is a no-op.
 */
export function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T> | T): Promise<T> {
  const tracer = trace.getTracer(TRACER);
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error | undefined)?.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Marks a span as failed without an exception (an HTTP 5xx, a refused callback). */
export function markSpanError(span: Span, message?: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Writes the current trace context (`traceparent`, `tracestate`) through `set`; nothing when tracing is off. */
export function injectTraceContext(set: (key: string, value: string) => void, ctx: Context = context.active()): void {
  propagation.inject(ctx, undefined, { set: (_carrier, key, value) => set(key, value) });
}

/** The trace context carried by `get` (a `traceparent` header), as a parent for a span; empty when there is none. */
export function extractTraceContext(get: (key: string) => string | null | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, undefined, {
    get: (_carrier, key) => get(key) ?? undefined,
    keys: () => ["traceparent", "tracestate"],
  });
}

/** The current `traceparent`, for storing with something that travels later (an outbox row). */
export function currentTraceparent(): string | undefined {
  let value: string | undefined;
  injectTraceContext((key, v) => {
    if (key === "traceparent") value = v;
  });
  return value;
}

/**
 * A span that is not made the active one, for work done for many messages at once (a batch
 * taken in in one transaction): each message keeps a span of its own in its own trace.
 * `traceparent` is that span's (to store with what the message leads to; undefined when
 * tracing is off); `end` ends it, failed when given an error.
 */
export function startDetachedSpan(name: string, options: SpanOptions): { traceparent: string | undefined; end(err?: unknown): void } {
  const parent = options.parent ?? context.active();
  const span = trace.getTracer(TRACER).startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent);
  let traceparent: string | undefined;
  injectTraceContext((key, v) => {
    if (key === "traceparent") traceparent = v;
  }, trace.setSpan(parent, span));
  return {
    traceparent,
    end(err?: unknown) {
      if (err !== undefined) {
        const error = err instanceof Error ? err : new Error(typeof err === "string" ? err : "failed");
        span.recordException(error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      }
      span.end();
    },
  };
}

/** A span link to the trace a stored `traceparent` names (when a new trace follows from an old one). */
export function linkTo(traceparent: string | null | undefined): Link[] {
  if (!traceparent) return [];
  const spanContext = trace.getSpanContext(extractTraceContext((key) => (key === "traceparent" ? traceparent : undefined)));
  return spanContext ? [{ context: spanContext }] : [];
}
