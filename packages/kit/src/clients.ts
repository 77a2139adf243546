import { createHash } from "node:crypto";
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager, type GrpcTransportOptions } from "@connectrpc/connect-node";
import type { ClientTlsOptions } from "./internal-tls.js";
import { createInFlightLimit, type InFlightLimit } from "./in-flight-limit.js";
import { outgoingInterceptor } from "./interceptors.js";
import type { Metrics } from "./metrics.js";

export interface TransportOptions {
  /** Sent as a bearer token when set (INTERNAL_API_TOKEN). */
  token?: string | undefined;
  /** Deadline of each call unless the caller sets one. */
  timeoutMs?: number | undefined;
  /** CA and client certificate for `https://` URLs (INTERNAL_TLS_*, see loadClientTls); `http://` URLs ignore it. */
  tls?: ClientTlsOptions | undefined;
  interceptors?: Interceptor[];
  /** Where the calls' durations go (`rpc_client_duration_seconds`); none recorded without it. */
  metrics?: Metrics | undefined;
}

const metricsIds = new WeakMap<Metrics, number>();
let lastMetricsId = 0;
/** A key part naming a Metrics object: transports recording into different registries are not shared. */
export function metricsKey(metrics: Metrics | undefined): string {
  if (!metrics) return "-";
  let id = metricsIds.get(metrics);
  if (id === undefined) {
    id = ++lastMetricsId;
    metricsIds.set(metrics, id);
  }
  return String(id);
}

export const DEFAULT_RPC_TIMEOUT_MS = 5000;

/**
 * Internal calls go over loopback or a data-centre network, where zlib costs far more CPU
 * than the bytes it saves: kit clients neither compress requests nor advertise an encoding
 * they accept, so services never compress their answers to them (see rpc-server.ts).
 */
const NO_COMPRESSION: Pick<GrpcTransportOptions, "acceptCompression" | "sendCompression"> = { acceptCompression: [], sendCompression: undefined };

/** Transports in the cache before the oldest is dropped (a process talks to a handful of addresses). */
const MAX_CACHED = 64;

const transports = new Map<string, Transport>();
const sessions = new Map<string, Http2SessionManager>();
/** One in-flight limit per session: every transport on a connection shares its slots. */
const limits = new Map<string, InFlightLimit>();

function remember<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    cache.set(key, value);
    // A dropped entry keeps working for whoever holds it; it is only no longer shared.
    if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  }
  return value;
}

function digest(parts: ReadonlyArray<string | Buffer | undefined>): string {
  const hash = createHash("sha256");
  for (const part of parts) {
    if (part === undefined) hash.update("-;");
    else hash.update(`${Buffer.byteLength(part)}:`).update(part).update(";");
  }
  return hash.digest("hex");
}

/**
 * One HTTP/2 connection (session manager) per address and TLS identity, whoever calls it:
 * the token and deadline are per call, the connection is not.
 */
function sessionKey(baseUrl: string, tls: ClientTlsOptions | undefined): string {
  return `${baseUrl}|${tls ? digest([tls.ca, tls.cert, tls.key]) : "-"}`;
}

function sessionFor(baseUrl: string, tls: ClientTlsOptions | undefined): Http2SessionManager {
  const key = sessionKey(baseUrl, tls);
  return remember(sessions, key, () => {
    const nodeOptions = tls ? { ...(tls.ca ? { ca: tls.ca } : {}), ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}) } : undefined;
    return new Http2SessionManager(baseUrl, undefined, nodeOptions);
  });
}

/**
 * gRPC over HTTP/2 to another service, forwarding the request id and the internal token,
 * uncompressed. The URL picks the wire: `http://` is cleartext HTTP/2, `https://` is TLS
 * (the service's certificate must name the URL's host and chain to INTERNAL_TLS_CA, or to
 * the public roots without it).
 *
 * One transport per address: calls with the same URL, token, TLS identity and deadline get
 * the same transport, so a process holds one connection per service it calls however many
 * clients it makes. Extra interceptors make a transport of their own, on the shared
 * connection.
 */
export function createServiceTransport(baseUrl: string, options: TransportOptions = {}): Transport {
  const tls = new URL(baseUrl).protocol === "https:" ? options.tls : undefined;
  const timeoutMs = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const make = () =>
    createGrpcTransport({
      baseUrl,
      sessionManager: sessionFor(baseUrl, tls),
      // The limit first: a call waiting for a slot is not yet an attempt (no span, no timing).
      interceptors: [remember(limits, sessionKey(baseUrl, tls), () => createInFlightLimit()).interceptor, outgoingInterceptor(options.token, options.metrics), ...(options.interceptors ?? [])],
      defaultTimeoutMs: timeoutMs,
      ...NO_COMPRESSION,
    });
  if (options.interceptors && options.interceptors.length > 0) return make();
  const key = `${baseUrl}|${options.token === undefined ? "-" : digest([options.token])}|${tls ? digest([tls.ca, tls.cert, tls.key]) : "-"}|${timeoutMs}|${metricsKey(options.metrics)}`;
  return remember(transports, key, make);
}

export function createServiceClient<S extends DescService>(service: S, baseUrl: string, options: TransportOptions = {}): Client<S> {
  return createClient(service, createServiceTransport(baseUrl, options));
}
