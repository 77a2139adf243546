import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { Code, ConnectError, createClient, type Client, type HandlerContext, type Interceptor, type ServiceImpl, type Transport } from "@connectrpc/connect";
import { compressionGzip, createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@payments/contracts/health";
import { MerchantService } from "@payments/contracts/merchant";
import {
  createLogger,
  createMetrics,
  createServiceClient,
  createServiceTransport,
  currentRequestId,
  errorInfo,
  listenRpc,
  serviceError,
  startServices,
  validationError,
  withRequestId,
  type Metrics,
  type RpcServer,
  type ServiceModule,
} from "../src/index.js";
import { countingRelay } from "@payments/testing";
import { openGuard } from "./fixtures/open-guard.js";

const logger = createLogger({ service: "test", level: "silent" });
const TOKEN = "a-long-internal-token";
const SERVING = HealthCheckResponse_ServingStatus.SERVING;

/** What the handler saw on its last call. */
interface Seen {
  requestId?: string | undefined;
  protocolName?: string;
  aborted?: unknown;
  calls: number;
  /** Calls that returned an answer. */
  answered: number;
}

/**
 * GetMerchant whose merchant id says what to do: "missing", "invalid", "crash", "slow"
 * (waits for its signal), "wait:<ms>", "mutate" (writes into the request), "big" (a 4 KiB
 * name); anything else is found.
 */
function merchantImpl(seen: Seen): Partial<ServiceImpl<typeof MerchantService>> {
  return {
    async getMerchant(req, ctx: HandlerContext) {
      seen.calls++;
      seen.requestId = currentRequestId();
      seen.protocolName = ctx.protocolName;
      const id = req.merchantId;
      if (id === "missing") throw serviceError(Code.NotFound, "MERCHANT_NOT_FOUND", `merchant ${id} not found`, { details: { merchantId: id } });
      if (id === "invalid") throw validationError("merchant_id", "merchant_id: is required");
      if (id === "crash") throw new Error("SELECT secret FROM merchants: connection lost");
      if (id === "slow") {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 3000);
          ctx.signal.addEventListener("abort", () => {
            seen.aborted = ctx.signal.reason;
            clearTimeout(timer);
            resolve();
          });
        });
        throw new ConnectError("gave up", Code.Aborted);
      }
      if (id.startsWith("wait:")) await new Promise((resolve) => setTimeout(resolve, Number(id.slice(5))));
      if (id === "mutate") req.merchantId = "changed by the handler";
      seen.answered++;
      return { merchant: { id: req.merchantId, name: id === "big" ? "x".repeat(4096) : "Shop" } };
    },
  };
}

async function startServer(t: ExecutionContext, options: { token?: string; interceptors?: Interceptor[]; metrics?: Metrics } = {}) {
  const seen: Seen = { calls: 0, answered: 0 };
  let registrations = 0;
  const server = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  server.serve({
    routes: (router) => {
      registrations++;
      router.service(MerchantService, merchantImpl(seen));
    },
    services: [MerchantService],
    logger,
    metrics: options.metrics ?? createMetrics(),
    internalToken: options.token,
    interceptors: options.interceptors,
  });
  t.teardown(() => server.close(0));
  return { server, seen, registrations: () => registrations };
}

const inProcess = (server: RpcServer, token?: string, timeoutMs?: number) => createClient(MerchantService, server.inProcessTransport({ token, timeoutMs }));

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("the call succeeded");
}

// ---- 1. No compression on internal calls --------------------------------------------

test("a kit client neither advertises nor gets compression: no grpc-accept-encoding, and a 4 KiB answer comes back uncompressed", async (t) => {
  const requestHeaders: Headers[] = [];
  const { server } = await startServer(t, { interceptors: [(next) => (req) => (requestHeaders.push(new Headers(req.header)), next(req))] });
  const responseHeaders: Headers[] = [];
  const client = createServiceClient(MerchantService, server.url, {
    interceptors: [
      (next) => async (req) => {
        const res = await next(req);
        responseHeaders.push(new Headers(res.header));
        return res;
      },
    ],
  });
  const res = await client.getMerchant({ merchantId: "big" });
  t.is(res.merchant?.name.length, 4096);
  t.is(requestHeaders[0]?.get("grpc-accept-encoding"), null);
  t.is(requestHeaders[0]?.get("grpc-encoding"), null);
  t.is(responseHeaders[0]?.get("grpc-encoding"), null);
});

test("the port still compresses for a caller that asks, and accepts gzip-compressed requests (external gRPC clients)", async (t) => {
  const { server } = await startServer(t);
  const responseHeaders: Headers[] = [];
  const asking = createClient(
    MerchantService,
    createGrpcTransport({
      baseUrl: server.url,
      sendCompression: compressionGzip,
      compressMinBytes: 0,
      interceptors: [
        (next) => async (req) => {
          const res = await next(req);
          responseHeaders.push(new Headers(res.header));
          return res;
        },
      ],
    }),
  );
  const res = await asking.getMerchant({ merchantId: "big" });
  t.is(res.merchant?.name.length, 4096);
  t.is(responseHeaders[0]?.get("grpc-encoding"), "gzip");
});

// ---- 2. One transport per address ---------------------------------------------------

test("createServiceTransport gives one transport per URL, token, TLS identity and deadline", async (t) => {
  const url = "http://127.0.0.1:1";
  const tls = { ca: Buffer.from("ca one") };
  const a = createServiceTransport(url, { token: TOKEN, timeoutMs: 1000 });
  t.is(createServiceTransport(url, { token: TOKEN, timeoutMs: 1000 }), a);
  t.not(createServiceTransport(url, { token: `${TOKEN}-other`, timeoutMs: 1000 }), a);
  t.not(createServiceTransport(url, { token: TOKEN, timeoutMs: 2000 }), a);
  t.not(createServiceTransport("http://127.0.0.1:2", { token: TOKEN, timeoutMs: 1000 }), a);
  // TLS settings count for https:// only, and by content: the same files loaded twice are the same identity.
  t.is(createServiceTransport(url, { token: TOKEN, timeoutMs: 1000, tls }), a);
  const https = "https://127.0.0.1:1";
  t.is(createServiceTransport(https, { tls }), createServiceTransport(https, { tls: { ca: Buffer.from("ca one") } }));
  t.not(createServiceTransport(https, { tls }), createServiceTransport(https, { tls: { ca: Buffer.from("ca two") } }));
  // Extra interceptors are per caller: a transport of its own.
  t.not(createServiceTransport(url, { token: TOKEN, timeoutMs: 1000, interceptors: [(next) => next] }), a);
});

test("clients of one address share one connection: five service clients, five health clients and one with its own interceptor", async (t) => {
  const { server } = await startServer(t);
  const relay = await countingRelay(t, server.url);
  const calls: Array<Promise<unknown>> = [];
  for (let i = 0; i < 5; i++) {
    calls.push(createServiceClient(MerchantService, relay.url).getMerchant({ merchantId: `m${i}` }));
    calls.push(createServiceClient(Health, relay.url).check({ service: "" }));
  }
  calls.push(createServiceClient(Health, relay.url, { interceptors: [(next) => next] }).check({ service: "" }));
  await Promise.all(calls);
  t.is(relay.connections(), 1);
});

// ---- 3. The in-process transport behaves like the port ------------------------------

test("in process, service errors arrive with the same code, message and metadata (x-error-reason, field, details) as over HTTP/2", async (t) => {
  const { server } = await startServer(t);
  const network = createServiceClient(MerchantService, server.url);
  const local = inProcess(server);
  for (const merchantId of ["missing", "invalid", "crash"]) {
    const overNetwork = await failure(network.getMerchant({ merchantId }));
    const inProc = await failure(local.getMerchant({ merchantId }));
    t.deepEqual(errorInfo(inProc), errorInfo(overNetwork), merchantId);
    t.is(inProc.code, overNetwork.code, merchantId);
  }
  const missing = errorInfo(await failure(local.getMerchant({ merchantId: "missing" })));
  t.deepEqual(missing, { code: Code.NotFound, reason: "MERCHANT_NOT_FOUND", field: undefined, details: { merchantId: "missing" }, message: "merchant missing not found" });
  const invalid = errorInfo(await failure(local.getMerchant({ merchantId: "invalid" })));
  t.is(invalid.field, "merchant_id");
  // A crash leaves the service as a bare INTERNAL: no SQL or stack, in process either.
  const crash = await failure(local.getMerchant({ merchantId: "crash" }));
  t.is(crash.code, Code.Internal);
  t.is(crash.rawMessage, "internal error");
});

test("in process, the transport's deadline and a call's own timeoutMs apply: DEADLINE_EXCEEDED for the caller, and the handler's signal aborts", async (t) => {
  const { server, seen } = await startServer(t);
  const started = performance.now();
  const err = await failure(inProcess(server, undefined, 100).getMerchant({ merchantId: "slow" }));
  t.is(err.code, Code.DeadlineExceeded);
  t.true(performance.now() - started < 1500);
  const perCall = await failure(inProcess(server).getMerchant({ merchantId: "slow" }, { timeoutMs: 50 }));
  t.is(perCall.code, Code.DeadlineExceeded);
  const network = await failure(createServiceClient(MerchantService, server.url).getMerchant({ merchantId: "slow" }, { timeoutMs: 50 }));
  t.is(network.code, perCall.code);
  for (let i = 0; i < 50 && seen.aborted === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.is(ConnectError.from(seen.aborted).code, Code.DeadlineExceeded);
});

test("in process, the caller's request id reaches the handler's logs, and a call without one gets a fresh id", async (t) => {
  const { server, seen } = await startServer(t);
  const local = inProcess(server);
  await withRequestId("req_from_the_gateway", () => local.getMerchant({ merchantId: "m1" }));
  t.is(seen.requestId, "req_from_the_gateway");
  await local.getMerchant({ merchantId: "m1" });
  t.regex(seen.requestId ?? "", /^req_/);
  t.not(seen.requestId, "req_from_the_gateway");
});

test("in process, the internal token is checked like on the port: with it the call passes, without or with another it is UNAUTHENTICATED, health needs none", async (t) => {
  const { server } = await startServer(t, { token: TOKEN });
  t.is((await inProcess(server, TOKEN).getMerchant({ merchantId: "m1" })).merchant?.name, "Shop");
  for (const token of [undefined, "another-long-internal-token"]) {
    const err = await failure(inProcess(server, token).getMerchant({ merchantId: "m1" }));
    const overNetwork = await failure(createServiceClient(MerchantService, server.url, { token }).getMerchant({ merchantId: "m1" }));
    t.is(err.code, Code.Unauthenticated);
    t.deepEqual(errorInfo(err), errorInfo(overNetwork));
  }
  const health = createClient(Health, server.inProcessTransport());
  t.is((await health.check({ service: MerchantService.typeName })).status, SERVING);
});

test("in process, a handler works on its own copy: writing into the request leaves the caller's message as it was", async (t) => {
  const { server } = await startServer(t);
  const request = { merchantId: "mutate" };
  const res = await inProcess(server).getMerchant(request);
  t.is(request.merchantId, "mutate");
  t.is(res.merchant?.id, "changed by the handler");
});

test("the port and the in-process transport share one registration of the routes, and both calls are counted in the RPC metrics", async (t) => {
  const metrics = createMetrics();
  const { server, seen, registrations } = await startServer(t, { metrics });
  await inProcess(server).getMerchant({ merchantId: "m1" });
  await createServiceClient(MerchantService, server.url).getMerchant({ merchantId: "m1" });
  await failure(inProcess(server).getMerchant({ merchantId: "missing" }));
  t.is(registrations(), 1);
  t.is(seen.calls, 3);
  const histogram = await metrics.registry.getSingleMetricAsString("rpc_server_duration_seconds");
  // In process the Connect protocol is used, over the port gRPC; the counts are by status code (0 OK, 5 NOT_FOUND).
  const count = (system: string, status: number) =>
    Number(new RegExp(`_count\\{rpc_system="${system}",rpc_service="payments\\.merchant\\.v1\\.MerchantService",rpc_method="GetMerchant",rpc_grpc_status_code="${status}"\\} (\\d+)`).exec(histogram)?.[1] ?? 0);
  t.is(count("grpc", 0) + count("connect_rpc", 0), 2, histogram);
  t.is(count("grpc", 5) + count("connect_rpc", 5), 1, histogram);
});

test("in process, calls before serve() and after close() get UNAVAILABLE like the port; close waits for a call in flight", async (t) => {
  const server = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  const transport: Transport = server.inProcessTransport();
  const client: Client<typeof MerchantService> = createClient(MerchantService, transport);
  t.is((await failure(client.getMerchant({ merchantId: "m1" }))).code, Code.Unavailable);
  const seen: Seen = { calls: 0, answered: 0 };
  server.serve({ routes: (router) => router.service(MerchantService, merchantImpl(seen)), services: [MerchantService], logger, metrics: createMetrics() });
  const inFlight = client.getMerchant({ merchantId: "wait:200" });
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.is(seen.answered, 0);
  await server.close(5000);
  t.is(seen.answered, 1, "close returned before the call in flight was answered");
  t.is((await inFlight).merchant?.id, "wait:200");
  t.is((await failure(client.getMerchant({ merchantId: "m1" }))).code, Code.Unavailable);
});

test("startServices hosting several modules: a module's client of another runs in process (Connect router), an outside client over gRPC", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "kit-in-process-"));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const seen: Seen = { calls: 0, answered: 0 };
  const callee: ServiceModule = {
    name: "callee",
    services: [MerchantService],
    migrations: [],
    createContext: (base) => base,
    access: () => [],
    routes: (router) => router.service(MerchantService, merchantImpl(seen)),
  };
  const caller: ServiceModule = { name: "caller", services: [], migrations: [], createContext: (base) => base, routes: () => undefined, access: () => [] };
  const running = await startServices([callee, caller], {
    guard: openGuard,
    mode: "all-in-one",
    logger,
    env: { GRPC_PORT: "0", DATA_DIR: dataDir, INTERNAL_API_TOKEN: TOKEN, RPC_TIMEOUT: "100ms" },
  });
  t.teardown(() => running.stop());
  const client = running.contexts.get("caller")!.client(MerchantService, "callee");
  await withRequestId("req_job", () => client.getMerchant({ merchantId: "m1" }));
  t.is(seen.protocolName, "connect");
  t.is(seen.requestId, "req_job");
  // RPC_TIMEOUT applies in process.
  t.is((await failure(client.getMerchant({ merchantId: "slow" }))).code, Code.DeadlineExceeded);
  // The port still serves every module, with the token.
  await createServiceClient(MerchantService, running.server.url, { token: TOKEN }).getMerchant({ merchantId: "m1" });
  t.is(seen.protocolName, "grpc");
  t.is((await createClient(Health, running.localTransport).check({ service: MerchantService.typeName })).status, SERVING);
});
