import https from "node:https";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { Health, HealthCheckResponse_ServingStatus } from "@payments/contracts/health";
import {
  ConfigError,
  createLogger,
  createMetrics,
  createServiceClient,
  listenRpc,
  loadClientTls,
  loadServerTls,
  startServices,
  type ClientTlsOptions,
  type Env,
  type RpcServer,
  type ServiceModule,
} from "../src/index.js";
import { createTestCa, internalPki, pemDirectory } from "./certificates.js";
import { openGuard } from "./fixtures/open-guard.js";

const logger = createLogger({ service: "test", level: "silent" });
const SERVING = HealthCheckResponse_ServingStatus.SERVING;
const pki = internalPki();
test.after.always(() => pki.files.remove());
const pathOf = (name: string) => pki.files.path(name);
const pem = (name: string) => readFileSync(pathOf(name));

const serverEnv = (mtls: boolean): Env => ({
  GRPC_TLS_CERT: pathOf("server.pem"),
  GRPC_TLS_KEY: pathOf("server-key.pem"),
  ...(mtls ? { GRPC_TLS_CLIENT_CA: pathOf("ca.pem") } : {}),
});
const clientEnv: Env = {
  INTERNAL_TLS_CA: pathOf("ca.pem"),
  INTERNAL_TLS_CERT: pathOf("client.pem"),
  INTERNAL_TLS_KEY: pathOf("client-key.pem"),
};

async function startTlsServer(t: { teardown(fn: () => unknown): void }, mtls: boolean): Promise<RpcServer> {
  const server = await listenRpc({ port: 0, host: "127.0.0.1", logger, tls: loadServerTls(serverEnv(mtls)) });
  server.serve({ routes: () => undefined, services: [], logger, metrics: createMetrics() });
  t.teardown(() => server.close(0));
  return server;
}

/** A standard grpc.health.v1 Check over the kit's service transport (gRPC, HTTP/2). */
async function check(url: string, tls?: ClientTlsOptions) {
  const client = createServiceClient(Health, url, { tls, timeoutMs: 10_000 });
  return (await client.check({ service: "" })).status;
}

/** GET over HTTP/1.1 + TLS (no ALPN), like a probe or a scraper. */
function get(url: string, tls: { ca?: Buffer; cert?: Buffer; key?: Buffer }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ...tls, timeout: 10_000 }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
}

const ca = pem("ca.pem");
const validClient: ClientTlsOptions = { ca, cert: pem("client.pem"), key: pem("client-key.pem") };

test("with mTLS, a client with a certificate from the internal CA is served over gRPC", async (t) => {
  const server = await startTlsServer(t, true);
  t.regex(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  t.is(await check(server.url, validClient), SERVING);
});

test("with mTLS, a client without a certificate is refused", async (t) => {
  const server = await startTlsServer(t, true);
  await t.throwsAsync(check(server.url, { ca }));
});

test("with mTLS, a client with a certificate from another CA is refused", async (t) => {
  const server = await startTlsServer(t, true);
  await t.throwsAsync(check(server.url, { ca, cert: pem("rogue-client.pem"), key: pem("rogue-client-key.pem") }));
});

test("with TLS on, a plaintext client is refused", async (t) => {
  for (const mtls of [true, false]) {
    const server = await startTlsServer(t, mtls);
    const plaintext = server.url.replace("https://", "http://");
    await t.throwsAsync(check(plaintext), undefined, `gRPC over h2c, mtls=${mtls}`);
    const connect = createClient(Health, createConnectTransport({ baseUrl: plaintext, httpVersion: "1.1" }));
    await t.throwsAsync(connect.check({ service: "" }), undefined, `Connect over HTTP/1.1, mtls=${mtls}`);
  }
});

test("with TLS and no client CA, a client trusting the internal CA is served without a certificate", async (t) => {
  const server = await startTlsServer(t, false);
  t.is(await check(server.url, { ca }), SERVING);
});

test("a client that does not trust the internal CA refuses the server's certificate", async (t) => {
  const server = await startTlsServer(t, false);
  await t.throwsAsync(check(server.url));
  await t.throwsAsync(check(server.url, { ca: Buffer.from(pki.rogue.certPem) }));
});

test("the one TLS port still serves Connect over HTTP/1.1, /healthz and /metrics to a client with a certificate", async (t) => {
  const server = await startTlsServer(t, true);
  const connect = createClient(
    Health,
    createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { ca, cert: validClient.cert!, key: validClient.key! } }),
  );
  t.is((await connect.check({ service: "" })).status, SERVING);
  const healthz = await get(`${server.url}/healthz`, validClient);
  t.is(healthz.status, 200);
  t.deepEqual(JSON.parse(healthz.body), { status: "SERVING" });
  const metrics = await get(`${server.url}/metrics`, validClient);
  t.is(metrics.status, 200);
  t.regex(metrics.body, /^# TYPE rpc_server_duration_seconds histogram$/m);
});

test("with mTLS, probes and scrapers need a client certificate too: /healthz without one is refused", async (t) => {
  const server = await startTlsServer(t, true);
  await t.throwsAsync(get(`${server.url}/healthz`, { ca }));
  // TLS without a client CA: any client that trusts the server can probe.
  const open = await startTlsServer(t, false);
  t.is((await get(`${open.url}/healthz`, { ca })).status, 200);
});

test("a plain @grpc/grpc-js client with TLS credentials and a client certificate is served (ALPN h2)", async (t) => {
  const server = await startTlsServer(t, true);
  const address = server.url.replace("https://", "");
  const call = (credentials: grpc.ChannelCredentials) => {
    // SNI takes names, not IP addresses: the certificate is checked against "localhost".
    const client = new grpc.Client(address, credentials, { "grpc.ssl_target_name_override": "localhost" });
    return new Promise<Buffer>((resolve, reject) => {
      client.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        { deadline: Date.now() + 10_000 },
        (err, value) => {
          client.close();
          if (err) reject(err);
          else resolve(value!);
        },
      );
    });
  };
  // HealthCheckResponse { status = SERVING (1) }: field 1, varint.
  t.deepEqual(await call(grpc.credentials.createSsl(ca, validClient.key, validClient.cert)), Buffer.from([0x08, 0x01]));
  await t.throwsAsync(call(grpc.credentials.createSsl(ca)));
});

// --- settings ---

/** The message of the ConfigError that fn throws. */
function configError(t: ExecutionContext, fn: () => unknown): string {
  return t.throws(fn, { instanceOf: ConfigError }).message;
}

test("no TLS setting: cleartext, as before", (t) => {
  t.is(loadServerTls({}), undefined);
  t.is(loadClientTls({}), undefined);
  t.is(loadServerTls({ GRPC_TLS_CERT: "", GRPC_TLS_KEY: "" }), undefined, "empty counts as unset");
});

test("server settings are read into PEM contents; the client CA turns on mTLS", (t) => {
  const tls = loadServerTls(serverEnv(true));
  t.deepEqual(tls?.cert, pem("server.pem"));
  t.deepEqual(tls?.key, pem("server-key.pem"));
  t.deepEqual(tls?.clientCa, pem("ca.pem"));
  t.false("clientCa" in (loadServerTls(serverEnv(false)) ?? {}));
});

test("client settings: a CA alone, or a CA with a client certificate and key", (t) => {
  t.deepEqual(loadClientTls({ INTERNAL_TLS_CA: pathOf("ca.pem") }), { ca: pem("ca.pem") });
  t.deepEqual(loadClientTls(clientEnv), validClient);
});

test("a certificate without its key (or a key without its certificate) is refused, naming the missing setting", (t) => {
  t.regex(configError(t, () => loadServerTls({ GRPC_TLS_CERT: pathOf("server.pem") })), /GRPC_TLS_KEY: required when GRPC_TLS_CERT is set/);
  t.regex(configError(t, () => loadServerTls({ GRPC_TLS_KEY: pathOf("server-key.pem") })), /GRPC_TLS_CERT: required when GRPC_TLS_KEY is set/);
  t.regex(configError(t, () => loadClientTls({ INTERNAL_TLS_CERT: pathOf("client.pem") })), /INTERNAL_TLS_KEY: required when INTERNAL_TLS_CERT is set/);
  t.regex(configError(t, () => loadClientTls({ INTERNAL_TLS_KEY: pathOf("client-key.pem") })), /INTERNAL_TLS_CERT: required when INTERNAL_TLS_KEY is set/);
});

test("an unreadable file is refused, naming the setting and the path; every problem is reported at once", (t) => {
  const message = configError(t, () =>
    loadClientTls({ INTERNAL_TLS_CA: "/nonexistent/ca.pem", INTERNAL_TLS_CERT: "/nonexistent/client.pem", INTERNAL_TLS_KEY: pathOf("client-key.pem") }),
  );
  t.regex(message, /INTERNAL_TLS_CA: cannot read \/nonexistent\/ca\.pem \(ENOENT\)/);
  t.regex(message, /INTERNAL_TLS_CERT: cannot read \/nonexistent\/client\.pem \(ENOENT\)/);
  t.regex(configError(t, () => loadServerTls({ ...serverEnv(false), GRPC_TLS_CLIENT_CA: pki.files.dir })), /GRPC_TLS_CLIENT_CA: cannot read .* \(EISDIR\)/);
});

test("a file that is not what its setting needs is refused", (t) => {
  t.regex(configError(t, () => loadServerTls({ GRPC_TLS_CERT: pathOf("server-key.pem"), GRPC_TLS_KEY: pathOf("server-key.pem") })), /GRPC_TLS_CERT: .* holds no PEM certificate/);
  t.regex(configError(t, () => loadServerTls({ GRPC_TLS_CERT: pathOf("server.pem"), GRPC_TLS_KEY: pathOf("server.pem") })), /GRPC_TLS_KEY: .* holds no usable unencrypted PEM private key/);
  t.regex(configError(t, () => loadClientTls({ INTERNAL_TLS_CA: pathOf("client-key.pem") })), /INTERNAL_TLS_CA: .* holds no PEM certificate/);
});

test("a key that does not belong to the certificate is refused", (t) => {
  const message = configError(t, () => loadServerTls({ GRPC_TLS_CERT: pathOf("server.pem"), GRPC_TLS_KEY: pathOf("client-key.pem") }));
  t.regex(message, /GRPC_TLS_KEY: .*client-key\.pem is not the private key of the certificate in GRPC_TLS_CERT/);
});

test("an expired certificate is refused at startup", (t) => {
  const expiredCa = createTestCa("expired test CA");
  const expired = expiredCa.server({ commonName: "localhost", dns: ["localhost"], notBefore: new Date(Date.now() - 2 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });
  const files = pemDirectory({ "cert.pem": expired.certPem, "key.pem": expired.keyPem });
  t.teardown(() => files.remove());
  t.regex(configError(t, () => loadServerTls({ GRPC_TLS_CERT: files.path("cert.pem"), GRPC_TLS_KEY: files.path("key.pem") })), /GRPC_TLS_CERT: the certificate in .* expired on/);
});

test("GRPC_TLS_CLIENT_CA without a server certificate is refused (client certificates need TLS)", (t) => {
  t.regex(configError(t, () => loadServerTls({ GRPC_TLS_CLIENT_CA: pathOf("ca.pem") })), /GRPC_TLS_CLIENT_CA: client certificates are checked only on TLS/);
});

// --- the service bootstrap ---

const emptyModule = (name: string): ServiceModule => ({ name, services: [], migrations: [], createContext: (base) => base, routes: () => undefined, access: () => [] });

test("startServices refuses a bad TLS setting before it listens", async (t) => {
  await t.throwsAsync(startServices([emptyModule("probe")], { guard: openGuard, mode: "split", logger, env: { GRPC_PORT: "0", GRPC_TLS_CERT: pathOf("server.pem") } }), {
    instanceOf: ConfigError,
    message: /GRPC_TLS_KEY: required/,
  });
  await t.throwsAsync(startServices([emptyModule("probe")], { guard: openGuard, mode: "split", logger, env: { GRPC_PORT: "0", INTERNAL_TLS_CA: "/nonexistent/ca.pem" } }), {
    instanceOf: ConfigError,
    message: /INTERNAL_TLS_CA: cannot read/,
  });
});

test("split services call each other over mTLS with the INTERNAL_TLS_* settings, and not without a client certificate", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "kit-tls-"));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const common = { GRPC_PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent", ...serverEnv(true), ...clientEnv };
  const beta = await startServices([emptyModule("beta")], { guard: openGuard, mode: "split", logger, env: common });
  t.teardown(() => beta.stop());
  t.regex(beta.server.url, /^https:/);
  const alpha = await startServices([emptyModule("alpha")], { guard: openGuard, mode: "split", logger, env: { ...common, BETA_SERVICE_URL: beta.server.url } });
  t.teardown(() => alpha.stop());
  const client = alpha.contexts.get("alpha")!.client(Health, "beta");
  t.is((await client.check({ service: "" })).status, SERVING);

  const withoutClientCert: Env = { ...common, INTERNAL_TLS_CERT: undefined, INTERNAL_TLS_KEY: undefined };
  const gamma = await startServices([emptyModule("gamma")], { guard: openGuard, mode: "split", logger, env: { ...withoutClientCert, BETA_SERVICE_URL: beta.server.url } });
  t.teardown(() => gamma.stop());
  await t.throwsAsync(gamma.contexts.get("gamma")!.client(Health, "beta").check({ service: "" }));
});

test("all-in-one on TLS: the port is https://, and local modules reach each other in process", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "kit-tls-"));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const running = await startServices([emptyModule("one"), emptyModule("two")], {
    guard: openGuard,
    mode: "all-in-one",
    logger,
    env: { GRPC_PORT: "0", DATA_DIR: dataDir, ...serverEnv(true), ...clientEnv },
  });
  t.teardown(() => running.stop());
  t.regex(running.server.url, /^https:\/\/127\.0\.0\.1:/);
  t.is((await running.contexts.get("one")!.client(Health, "two").check({ service: "" })).status, SERVING);
});

test("https:// without INTERNAL_TLS_CA trusts only the public roots; http:// URLs ignore the TLS settings", async (t) => {
  const server = await startTlsServer(t, false);
  await t.throwsAsync(check(server.url, {}), { message: /certificate/ });
  const cleartext = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  cleartext.serve({ routes: () => undefined, services: [], logger, metrics: createMetrics() });
  t.teardown(() => cleartext.close(0));
  t.is(await check(cleartext.url, validClient), SERVING);
});
