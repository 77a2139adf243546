import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { startAllInOne, type AllInOne } from "@payments/all-in-one";
import { run } from "@payments/cli";
import { startGateway } from "@payments/gateway";
import { ConfigError, type Env } from "@payments/kit";
import { internalPki } from "../packages/kit/test/certificates.js";
import { TEST_OPERATOR_ENV } from "@payments/testing";

// The internal API on mTLS, end to end: the all-in-one serves it on https:// and calls
// itself with its client certificate, the gateway and the operator CLI call it with theirs.
const pki = internalPki();
const dataDir = mkdtempSync(join(tmpdir(), "internal-tls-"));
const clientEnv: Env = {
  INTERNAL_TLS_CA: pki.files.path("ca.pem"),
  INTERNAL_TLS_CERT: pki.files.path("client.pem"),
  INTERNAL_TLS_KEY: pki.files.path("client-key.pem"),
};
let app: AllInOne;

test.before(async () => {
  app = await startAllInOne({
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      GRPC_PORT: "0",
      CONSOLE_PORT: "0",
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      // A loaded CI machine may need more than the default 1s for the first /healthz.
      HEALTH_TIMEOUT: "10s",
      GRPC_TLS_CERT: pki.files.path("server.pem"),
      GRPC_TLS_KEY: pki.files.path("server-key.pem"),
      GRPC_TLS_CLIENT_CA: pki.files.path("ca.pem"),
      ...clientEnv,
    },
  });
});

test.after.always(async () => {
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (app as typeof app | undefined)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  pki.files.remove();
});

async function cli(args: string[], env: Env) {
  let stdout = "";
  let stderr = "";
  const code = await run(args, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, env });
  return { code, stdout, stderr };
}

test("the all-in-one serves its internal API on https:// at 127.0.0.1", (t) => {
  t.regex(app.services.server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
});

test("with the port on mTLS, the all-in-one gateway (in process) finds every service SERVING at /healthz", async (t) => {
  const res = await fetch(`${app.gateway.url}/healthz`);
  const body = (await res.json()) as { data: { services: Record<string, string> } };
  t.is(res.status, 200, JSON.stringify(body));
  t.deepEqual(Object.values(body.data.services), ["SERVING", "SERVING", "SERVING", "SERVING", "SERVING"]);
});

test("the CLI calls services over mTLS with INTERNAL_TLS_CA, INTERNAL_TLS_CERT and INTERNAL_TLS_KEY", async (t) => {
  // As an operator on the all-in-one's machine: its data directory holds the local admin key the CLI signs with.
  const r = await cli(["merchant", "create", "--name", "TLS Shop", "--sandbox", "--json", "--grpc-url", app.services.server.url], { ...clientEnv, DATA_DIR: dataDir, PAYMENTS_OPERATOR: "tls-operator" });
  t.is(r.code, 0, r.stderr);
  t.truthy((JSON.parse(r.stdout) as { merchantId: string }).merchantId);
});

test("the CLI without a client certificate is refused by the mTLS services", async (t) => {
  const r = await cli(["merchant", "list", "--json", "--grpc-url", app.services.server.url], { INTERNAL_TLS_CA: clientEnv.INTERNAL_TLS_CA });
  t.is(r.code, 1);
  t.regex(r.stderr, /^error: TLS with https:\/\/127\.0\.0\.1:\d+ failed — check INTERNAL_TLS_CA, INTERNAL_TLS_CERT and INTERNAL_TLS_KEY \(.*certificate required/);
});

test("the CLI refuses a half-set client certificate as a usage error naming the setting", async (t) => {
  const r = await cli(["merchant", "list", "--grpc-url", app.services.server.url], { INTERNAL_TLS_CERT: clientEnv.INTERNAL_TLS_CERT });
  t.is(r.code, 2);
  t.regex(r.stderr, /INTERNAL_TLS_KEY: required when INTERNAL_TLS_CERT is set/);
});

test("the gateway refuses to start on an unreadable INTERNAL_TLS_CA", async (t) => {
  const url = app.services.server.url;
  await t.throwsAsync(
    startGateway({
      env: { ...TEST_OPERATOR_ENV, PORT: "0", LOG_LEVEL: "silent", INTERNAL_TLS_CA: "/nonexistent/ca.pem" },
      merchantUrl: url,
      bankCatalogUrl: url,
      depositUrl: url,
      payoutUrl: url,
      callbackUrl: url,
    }),
    { instanceOf: ConfigError, message: /INTERNAL_TLS_CA: cannot read \/nonexistent\/ca\.pem/ },
  );
});
