import test from "ava";
import { createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@payments/contracts/health";
import { MerchantService } from "@payments/contracts/merchant";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { startGateway } from "@payments/gateway";
import { createLogger, createServiceTransport } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, credentialsOf, eventually, type OwnNatsServer, startNatsServer, TEST_OPERATOR_ENV } from "@payments/testing";
import { startSplitDeployment, type SplitDeployment } from "@payments/testing/services";
import { signedFetch, type Credentials } from "./helpers.js";

// Issue 12: a split deployment started while NATS is down. The services start, say they are
// not ready and why, log that they wait for NATS (by name and address), take writes into
// their outboxes, and become ready by themselves when NATS comes, without a restart. A NATS
// outage while running is logged both ways and turns readiness off and on again. The
// gateway stays ready throughout, and while a backing service is down.
const token = "nats-outage-readiness-internal-token";
let nats: OwnNatsServer;
let split: SplitDeployment | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
const lines: Array<Record<string, unknown>> = [];
const logger = createLogger({
  service: "nats-outage-test",
  level: "info",
  destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
});
const logged = (text: string) => lines.some((l) => String(l.msg).includes(text));

test.after.always(async () => {
  await gateway?.stop();
  await split?.stop();
  // Unset if the first test failed before starting it, or did not run: its declared type says otherwise.
  await (nats as typeof nats | undefined)?.destroy();
});

/** What /livez, /readyz and /healthz answer, as far as these tests read it: a service's readiness names its checks, the gateway's its status, its /healthz each backing service. */
interface ProbeBody {
  checks?: Record<string, string>;
  data?: { status?: string };
  error?: { details?: Record<string, string> };
}

async function probe(url: string, path: string): Promise<{ status: number; body: ProbeBody }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: (await res.json()) as ProbeBody };
}

test.serial("a split service starts while NATS is down, waits for it, and becomes ready by itself; the outbox holds writes meanwhile", async (t) => {
  nats = await startNatsServer();
  await nats.stop();
  const address = `nats://127.0.0.1:${nats.port}`;

  const started = Date.now();
  split = await startSplitDeployment({
    services: ["merchant", "bank-catalog"],
    token,
    natsUrl: nats.url,
    common: { LOG_LEVEL: "info" },
    env: { merchant: { MASTER_KEY: "e".repeat(64) } },
    logger: (service) => logger.child({ service }),
  });
  const { js } = split;
  t.log(`both started without NATS in ${Date.now() - started} ms`);

  t.true(logged(`waiting for NATS (${address})`), "the wait is logged with NATS's address");
  t.is((await probe(split.url("merchant"), "/livez")).status, 200, "alive");
  const notReady = await probe(split.url("merchant"), "/readyz");
  t.is(notReady.status, 503);
  t.is(notReady.body.checks?.bus, `NATS not connected (${address})`);
  t.is(notReady.body.checks?.["database:merchant"], "ok");
  t.is(notReady.body.checks?.migrations, "ok");
  const health = createServiceClient(Health, split.url("merchant"), { token });
  t.is((await health.check({ service: "" })).status, ServingStatus.NOT_SERVING, "grpc.health.v1 answers from readiness");
  t.not((await health.check({ service: "payments.merchant.v1.MerchantService" }).catch(() => ({ status: -1 }))).status, ServingStatus.SERVING);
  t.is((await probe(split.url("merchant"), "/healthz")).status, 503, "/healthz mirrors the gRPC health check");

  // An outbox write while NATS is away: the change commits at once, its event waits.
  const merchants = createServiceClient(MerchantService, split.url("merchant"), { token });
  // A first call pays for what a process loads on first use (the identity checks' JWT library,
  // compiled on the fly from the sources here): a read first, so the write's time is its own.
  await merchants.listMerchants({});
  const t0 = Date.now();
  // A sandbox merchant: one call (a live one would wait for a second admin, which is not what this measures).
  const created = await merchants.createMerchant({ name: "Waiting Shop", sandbox: true });
  const took = Date.now() - t0;
  t.log(`the write took ${took} ms with NATS down`);
  t.true(took < 1000, "the write did not wait for NATS");
  const db = split.service("merchant").contexts.get("merchant")!.db;
  const unpublished = async () => Number((await db("outbox").whereNull("published_at").count({ n: "*" }))[0]?.n);
  t.true((await unpublished()) > 0, "the event waits in the outbox");

  // The gateway starts too, and is ready: NATS only carries its cache invalidations.
  gateway = await startGateway({
    logger: logger.child({ service: "gateway" }),
    env: {
      ...TEST_OPERATOR_ENV,
      ...js,
      PORT: "0",
      HOST: "127.0.0.1",
      INTERNAL_API_TOKEN: token,
      // Deposit, payout and callback-sender are down: nothing listens there.
      ...split.serviceUrls("http://127.0.0.1:9"),
      PUBLIC_BASE_URL: "https://pay.example.test",
      LOG_LEVEL: "info",
    },
  });
  t.is((await probe(gateway.url, "/livez")).status, 200);
  t.is((await probe(gateway.url, "/readyz")).status, 200, "the gateway is ready while NATS and three services are down");

  const start = Date.now();
  await nats.start();
  await eventually(async () => (await probe(split!.url("merchant"), "/readyz")).status === 200, "merchant /readyz 200 after NATS came", 10_000);
  await eventually(async () => (await probe(split!.url("bank-catalog"), "/readyz")).status === 200, "bank-catalog /readyz 200 after NATS came", 10_000);
  t.log(`ready ${Date.now() - start} ms after NATS started`);
  t.true(logged(`NATS connected (${address})`));
  t.is((await health.check({ service: "" })).status, ServingStatus.SERVING);
  t.is((await probe(split.url("merchant"), "/healthz")).status, 200);
  await eventually(async () => (await unpublished()) === 0, "the backlog published once NATS is back", 15_000);
  t.truthy(created.merchant?.id);
});

test.serial("a NATS outage while running is logged both ways and turns readiness off and on; the gateway stays ready", async (t) => {
  const address = `nats://127.0.0.1:${nats.port}`;
  const health = createClient(Health, createServiceTransport(split!.url("merchant"), { token }));
  await nats.stop();
  await eventually(() => logged(`NATS disconnected (${address})`), "the disconnect logged", 10_000);
  await eventually(async () => (await probe(split!.url("merchant"), "/readyz")).status === 503, "/readyz 503 during the outage", 5_000);
  t.is((await health.check({ service: "" })).status, ServingStatus.NOT_SERVING);
  t.is((await probe(gateway!.url, "/readyz")).status, 200, "the gateway does not depend on NATS");

  // Writes go on; the outbox publishes them after.
  const merchants = createServiceClient(MerchantService, split!.url("merchant"), { token });
  await merchants.createMerchant({ name: "Outage Shop" });
  const db = split!.service("merchant").contexts.get("merchant")!.db;
  const unpublished = async () => Number((await db("outbox").whereNull("published_at").count({ n: "*" }))[0]?.n);
  t.true((await unpublished()) > 0);

  await nats.start();
  await eventually(() => logged("NATS reconnected"), "the reconnect logged", 15_000);
  await eventually(async () => (await probe(split!.url("merchant"), "/readyz")).status === 200, "/readyz 200 after the reconnect", 10_000);
  t.is((await health.check({ service: "" })).status, ServingStatus.SERVING);
  await eventually(async () => (await unpublished()) === 0, "the outage's backlog published", 15_000);
  t.pass();
});

test.serial("the gateway stays ready while a backing service is down; that service's routes answer 503 SERVICE_UNAVAILABLE, /healthz reports it", async (t) => {
  const merchants = createServiceClient(MerchantService, split!.url("merchant"), { token });
  const created = await merchants.createMerchant({ name: "Gateway Shop" });
  const creds: Credentials = credentialsOf(created);

  const ready = await probe(gateway!.url, "/readyz");
  t.is(ready.status, 200);
  t.is(ready.body.data?.status, "READY");
  const res = await signedFetch(gateway!.url, creds, "GET", "/v1/balance");
  t.is(res.status, 503, JSON.stringify(res.json));
  t.is((res.json.error as { code: string }).code, "SERVICE_UNAVAILABLE");
  const healthz = await probe(gateway!.url, "/healthz");
  t.is(healthz.status, 503, "/healthz keeps reporting every backing service");
  t.is(healthz.body.error?.details?.payout, "UNREACHABLE");
  t.is(healthz.body.error?.details?.merchant, "SERVING");
});

test.serial("shutdown: /readyz turns 503 (draining) before the port closes", async (t) => {
  const svc = await startServices([bankCatalogModule], {
    mode: "split",
    logger,
    env: { ...TEST_OPERATOR_ENV, GRPC_PORT: "0", INTERNAL_API_TOKEN: token, DATABASE_URL: split!.databases["bank-catalog"]!.url.replace(/\/(\w+)$/, "/$1_drain"), LOG_LEVEL: "fatal", SHUTDOWN_GRACE: "2s" },
  });
  t.is((await probe(svc.server.url, "/readyz")).status, 200);
  // A keep-alive connection asks during the grace period.
  const stopping = svc.stop();
  t.is(svc.readiness.isDraining(), true);
  t.is((await svc.readiness.evaluate()).ready, false);
  await stopping;
});
