import { startTracing } from "@payments/kit";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";

/**
 * Tracing on for this process with the SDK's in-memory exporter (one SimpleSpanProcessor):
 * `spans()` lists the finished spans; `stop()` shuts the SDK down (call it in test.after).
 */
export async function startInMemoryTracing(serviceName = "test"): Promise<{ spans(): ReadableSpan[]; reset(): void; stop(): Promise<void> }> {
  const exporter = new InMemorySpanExporter();
  const tracing = await startTracing(serviceName, {}, { spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { spans: () => exporter.getFinishedSpans(), reset: () => exporter.reset(), stop: () => tracing.shutdown() };
}
