import test, { type ExecutionContext } from "ava";
import { createLogger, createMetrics, listenRpc } from "@payments/kit";
import { startGateway } from "../src/server.js";
import { countingRelay, TEST_OPERATOR_ENV } from "@payments/testing";

/*
 * How the gateway reaches its five services: one transport (one HTTP/2 connection) per
 * address, shared by a service's client and its health client, or a ready-made transport
 * (the all-in-one's in-process one) with no URL at all.
 */

const logger = createLogger({ service: "test", level: "silent" });
const env = { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent" };

/** A health-only RPC server: what /healthz needs. */
async function startServices(t: ExecutionContext) {
  const server = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  server.serve({ routes: () => undefined, services: [], logger, metrics: createMetrics() });
  t.teardown(() => server.close(0));
  return server;
}

async function healthz(url: string) {
  const res = await fetch(`${url}/healthz`);
  return { status: res.status, body: (await res.json()) as { data?: { services: Record<string, string> } } };
}

test("five services at one URL: /healthz checks all five over one connection", async (t) => {
  const services = await startServices(t);
  const relay = await countingRelay(t, services.url);
  const gateway = await startGateway({
    env,
    logger,
    merchantUrl: relay.url,
    bankCatalogUrl: relay.url,
    depositUrl: relay.url,
    payoutUrl: relay.url,
    callbackUrl: relay.url,
  });
  t.teardown(() => gateway.stop());
  const res = await healthz(gateway.url);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(Object.values(res.body.data!.services), ["SERVING", "SERVING", "SERVING", "SERVING", "SERVING"]);
  t.is(relay.connections(), 1);
});

test("two addresses, two connections: one per address, whatever the number of clients", async (t) => {
  const services = await startServices(t);
  const merchantRelay = await countingRelay(t, services.url);
  const othersRelay = await countingRelay(t, services.url);
  const gateway = await startGateway({
    env,
    logger,
    merchantUrl: merchantRelay.url,
    bankCatalogUrl: othersRelay.url,
    depositUrl: othersRelay.url,
    payoutUrl: othersRelay.url,
    callbackUrl: othersRelay.url,
  });
  t.teardown(() => gateway.stop());
  t.is((await healthz(gateway.url)).status, 200);
  t.is(merchantRelay.connections(), 1);
  t.is(othersRelay.connections(), 1);
});

test("ready-made transports replace the URLs: no *_SERVICE_URL needed, and /healthz follows the in-process server", async (t) => {
  const services = await startServices(t);
  const local = services.inProcessTransport();
  const gateway = await startGateway({
    env,
    logger,
    transports: { merchant: local, bankCatalog: local, deposit: local, payout: local, callback: local },
  });
  t.teardown(() => gateway.stop());
  const res = await healthz(gateway.url);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(Object.values(res.body.data!.services), ["SERVING", "SERVING", "SERVING", "SERVING", "SERVING"]);
  // Once that server closes, its in-process transport refuses calls (UNAVAILABLE), as its port would.
  await services.close(0);
  t.is((await healthz(gateway.url)).status, 503);
});
