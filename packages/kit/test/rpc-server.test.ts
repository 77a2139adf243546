import test from "ava";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { Health, HealthCheckResponse_ServingStatus } from "@payments/contracts/health";
import { ServerReflection } from "@payments/contracts/reflection/v1";
import { Code } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { createLogger, createMetrics, createServiceClient, errorInfo, listenRpc } from "../src/index.js";

const logger = createLogger({ service: "test", level: "silent" });

async function startHealthOnly(token?: string) {
  const server = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  server.serve({ routes: () => undefined, services: [], logger, metrics: createMetrics(), internalToken: token });
  return server;
}

test("one port answers gRPC over HTTP/2 and Connect over HTTP/1.1", async (t) => {
  const server = await startHealthOnly();
  t.teardown(() => server.close(0));
  const grpcClient = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
  t.is((await grpcClient.check({ service: "" })).status, HealthCheckResponse_ServingStatus.SERVING);
  const connectClient = createClient(Health, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
  t.is((await connectClient.check({ service: "" })).status, HealthCheckResponse_ServingStatus.SERVING);
  const metrics = await fetch(`${server.url}/metrics`);
  t.is(metrics.status, 200);
  t.regex(await metrics.text(), /^# TYPE rpc_server_duration_seconds histogram$/m);
});

test("a plain @grpc/grpc-js client discovers services by reflection and checks health", async (t) => {
  const server = await startHealthOnly();
  t.teardown(() => server.close(0));
  const address = server.url.replace("http://", "");
  const reflection = new grpc.Client(address, grpc.credentials.createInsecure());
  t.teardown(() => reflection.close());
  // ServerReflectionRequest { list_services = 7 } encoded by hand: field 7, wire type 2, empty string.
  const request = Buffer.from([0x3a, 0x00]);
  const call = reflection.makeBidiStreamRequest(
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    (b: Buffer) => b,
    (b: Buffer) => b,
  );
  const response = await new Promise<Buffer>((resolve, reject) => {
    call.on("data", (data: Buffer) => resolve(data));
    call.on("error", reject);
    call.write(request);
  });
  call.end();
  t.true(response.includes(Buffer.from("grpc.health.v1.Health")));
});

test("with an internal token, calls without it are refused but health checks pass", async (t) => {
  const server = await startHealthOnly("a-long-internal-token");
  t.teardown(() => server.close(0));
  const anonymous = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
  t.is((await anonymous.check({ service: "" })).status, HealthCheckResponse_ServingStatus.SERVING);
  const listServices = async (client: ReturnType<typeof createClient<typeof ServerReflection>>) => {
    async function* one() {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
    }
    const names: string[] = [];
    for await (const res of client.serverReflectionInfo(one())) {
      if (res.messageResponse.case === "listServicesResponse") names.push(...res.messageResponse.value.service.map((s) => s.name));
    }
    return names;
  };
  const err = await t.throwsAsync(listServices(createClient(ServerReflection, createGrpcTransport({ baseUrl: server.url }))));
  t.regex(err.message, /internal API token/);
  const authorised = createClient(
    ServerReflection,
    createGrpcTransport({ baseUrl: server.url, interceptors: [(next) => (req) => (req.header.set("authorization", "Bearer a-long-internal-token"), next(req))] }),
  );
  t.true((await listServices(authorised)).includes("grpc.health.v1.Health"));
});

test("shutdown turns health to NOT_SERVING before closing", async (t) => {
  const server = await startHealthOnly();
  t.is(server.health.get(""), HealthCheckResponse_ServingStatus.SERVING);
  await server.close(0);
  t.is(server.health.get(""), HealthCheckResponse_ServingStatus.NOT_SERVING);
});

test("a caller whose thousands of calls time out at once keeps its connection: calls beyond the in-flight limit wait, and reset nothing", async (t) => {
  const server = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  // A service that answers nothing within the callers' deadline.
  server.serve({
    routes: (router) => router.service(MerchantService, { getMerchant: () => new Promise(() => undefined) }),
    services: [MerchantService],
    logger,
    metrics: createMetrics(),
  });
  t.teardown(() => server.close(0));
  const merchants = createServiceClient(MerchantService, server.url, { timeoutMs: 300 });
  const results = await Promise.allSettled(Array.from({ length: 3000 }, (_, i) => merchants.getMerchant({ merchantId: `mer_${i}` })));
  t.true(results.every((r) => r.status === "rejected" && errorInfo(r.reason).code === Code.DeadlineExceeded), "every call ran out of time");
  // Without the limit these 3,000 resets on one session pass nghttp2's rapid-reset guard and the
  // service closes the connection with INTERNAL_ERROR; a call on it would fail.
  const health = createServiceClient(Health, server.url);
  t.is((await health.check({ service: "" })).status, HealthCheckResponse_ServingStatus.SERVING);
});
