import test from "ava";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@payments/contracts/health";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { startServices } from "@payments/access";
import { createServiceClient, eventually, freePort, rejectionOf, startMariadbServer, TEST_OPERATOR_ENV } from "@payments/testing";

// Issue 12: a service whose database goes away is not ready (/readyz 503, grpc.health.v1
// NOT_SERVING) but alive (/livez 200), and ready again when the database is back, on a
// MariaDB server of this test's own. Its calls meanwhile answer UNAVAILABLE (the gateway's
// 503, retry later), never INTERNAL (a 500): a database restart is no bug (issue 21).
test("database down: /readyz 503 and NOT_SERVING, /livez 200, calls UNAVAILABLE; ready again once it is back", async (t) => {
  const mariadb = await startMariadbServer();
  const svc = await startServices([bankCatalogModule], {
    mode: "split",
    env: { GRPC_PORT: "0", INTERNAL_API_TOKEN: "database-readiness-token", ...TEST_OPERATOR_ENV, DATABASE_URL: mariadb.url("catalog"), LOG_LEVEL: "fatal" },
  });
  const health = createServiceClient(Health, svc.server.url, { token: "database-readiness-token" });
  const catalog = createServiceClient(BankCatalogService, svc.server.url, { token: "database-readiness-token" });
  const readyz = async () => {
    const res = await fetch(`${svc.server.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
  };
  try {
    t.is((await readyz()).status, 200);
    t.is((await health.check({ service: "" })).status, ServingStatus.SERVING);

    await mariadb.stop();
    await eventually(async () => (await readyz()).status === 503, "/readyz 503 with the database down", 10_000);
    const down = await readyz();
    t.not(down.body.checks["database:bank-catalog"], "ok");
    t.is(down.body.checks.bus, "ok");
    t.is((await health.check({ service: "" })).status, ServingStatus.NOT_SERVING);
    t.is((await fetch(`${svc.server.url}/livez`)).status, 200, "alive all the same");
    const refused = await rejectionOf(catalog.listBanks({}));
    t.is(refused.code, Code.Unavailable, "a call that needs the database: UNAVAILABLE, not INTERNAL");
    t.false(/ECONNREFUSED|127\.0\.0\.1|sql/i.test(refused.message), "no driver text leaves the service");

    await mariadb.start();
    await eventually(async () => (await readyz()).status === 200, "/readyz 200 with the database back", 20_000);
    t.is((await health.check({ service: "" })).status, ServingStatus.SERVING);
    await t.notThrowsAsync(catalog.listBanks({}), "and calls work again");
  } finally {
    await svc.stop();
    await mariadb.destroy();
  }
});

// Issue 21 (the chaos run found it): a replica started while its database restarts waited for
// nothing and exited ("failed to start: connect ECONNREFUSED"). It now waits, alive and not
// ready, as it waits for NATS, and starts once the database answers.
test("a service started while its database is down waits for it (alive, not ready) and starts when it comes", async (t) => {
  const mariadb = await startMariadbServer();
  await mariadb.stop();
  const port = await freePort();
  const starting = startServices([bankCatalogModule], {
    mode: "split",
    env: { GRPC_PORT: String(port), INTERNAL_API_TOKEN: "database-readiness-token", ...TEST_OPERATOR_ENV, DATABASE_URL: mariadb.url("catalog"), LOG_LEVEL: "fatal" },
  });
  let settled = false;
  void starting.then(
    () => (settled = true),
    () => (settled = true),
  );
  try {
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/livez`).catch(() => undefined))?.status === 200, "/livez 200 while waiting", 20_000);
    t.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 503, "not ready without its database");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    t.false(settled, "still waiting, not failed");

    await mariadb.start();
    const svc = await starting;
    t.is((await fetch(`${svc.server.url}/readyz`)).status, 200);
    const catalog = createServiceClient(BankCatalogService, svc.server.url, { token: "database-readiness-token" });
    await t.notThrowsAsync(catalog.listBanks({}), "migrated and serving");
  } finally {
    await starting.then((svc) => svc.stop()).catch(() => undefined);
    await mariadb.destroy();
  }
});
