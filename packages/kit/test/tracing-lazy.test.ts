import test from "ava";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const kitDir = fileURLToPath(new URL("..", import.meta.url));

/**
 * Starts tracing in a fresh node process, as a service's start does, and lists the
 * OpenTelemetry SDK and exporter packages it loaded: a resolve hook (which runs on the
 * loader thread, hence the file) records every such specifier.
 */
async function startAndListSdkLoads(env: Record<string, string>): Promise<{ enabled: boolean; loaded: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "tracing-lazy-"));
  const log = join(dir, "loads.txt");
  try {
    const hook = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  if (/^@opentelemetry\\/(sdk-|exporter-)/.test(specifier)) appendFileSync(${JSON.stringify(log)}, specifier + "\\n");
  return next(specifier, context);
}`;
    const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
    const script = `const { startTracing } = await import("@payments/kit");
const tracing = await startTracing("probe", ${JSON.stringify(env)});
await tracing.shutdown();
console.log(JSON.stringify({ enabled: tracing.enabled }));`;
    const { stdout } = await run(
      process.execPath,
      ["--conditions=source", "--import", "tsx", "--import", `data:text/javascript,${encodeURIComponent(register)}`, "--input-type=module", "-e", script],
      { cwd: kitDir, timeout: 60_000 },
    );
    let loaded: string[] = [];
    try {
      loaded = [...new Set(readFileSync(log, "utf8").split("\n").filter(Boolean))];
    } catch {
      // No file: nothing was loaded.
    }
    return { enabled: (JSON.parse(stdout.trim().split("\n").at(-1)!) as { enabled: boolean }).enabled, loaded };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The SDK costs a process about 25 MB resident and a quarter of a second of start: a
// service with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT) must not load it.
test("without an OTLP endpoint tracing is off and the SDK is never loaded", async (t) => {
  const { enabled, loaded } = await startAndListSdkLoads({});
  t.false(enabled);
  t.deepEqual(loaded, []);
});

test("with an OTLP endpoint the SDK and the OTLP exporter are loaded and tracing is on", async (t) => {
  const { enabled, loaded } = await startAndListSdkLoads({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
  t.true(enabled);
  t.true(loaded.includes("@opentelemetry/sdk-node"), loaded.join(", "));
  t.true(loaded.includes("@opentelemetry/exporter-trace-otlp-http"), loaded.join(", "));
});

test("OTEL_SDK_DISABLED=true keeps the SDK unloaded even with an endpoint", async (t) => {
  const { enabled, loaded } = await startAndListSdkLoads({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "true" });
  t.false(enabled);
  t.deepEqual(loaded, []);
});
