import test from "ava";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@payments/contracts/health";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { createServiceClient, startServices } from "@payments/kit";
import { eventually, freePort, stopProcess, waitForPort } from "@payments/kit/testing";

// Issue 12: a service whose database goes away is not ready (/readyz 503, grpc.health.v1
// NOT_SERVING) but alive (/livez 200), and ready again when the database is back. A MariaDB
// server of this test's own, as in services/callback-sender/test/outages.test.ts.
const MARIADBD = process.env.MARIADBD_BIN ?? "/usr/sbin/mariadbd";
const MARIADB_INSTALL_DB = process.env.MARIADB_INSTALL_DB_BIN ?? "/usr/bin/mariadb-install-db";

async function startMariadb(port: number, dataDir: string): Promise<ChildProcess> {
  const server = spawn(
    MARIADBD,
    ["--no-defaults", `--datadir=${dataDir}`, "--user=root", `--port=${port}`, "--bind-address=127.0.0.1", `--socket=${dataDir}/mysqld.sock`, `--pid-file=${dataDir}/mysqld.pid`, "--skip-log-bin", "--innodb-buffer-pool-size=32M"],
    { stdio: "ignore" },
  );
  await waitForPort(port, "mariadbd", 30_000);
  return server;
}

test("database down: /readyz 503 and NOT_SERVING, /livez 200; ready again once it is back", async (t) => {
  if (!existsSync(MARIADBD) || !existsSync(MARIADB_INSTALL_DB)) return t.fail(`${MARIADBD} or ${MARIADB_INSTALL_DB} not found`);
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), "readiness-db-"));
  const dataDir = join(home, "data");
  execFileSync(MARIADB_INSTALL_DB, ["--no-defaults", `--datadir=${dataDir}`, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"], { stdio: "ignore" });
  let mariadb = await startMariadb(port, dataDir);
  const svc = await startServices([bankCatalogModule], {
    mode: "split",
    env: { GRPC_PORT: "0", INTERNAL_API_TOKEN: "database-readiness-token", DATABASE_URL: `mysql://root@127.0.0.1:${port}/catalog`, LOG_LEVEL: "fatal" },
  });
  const health = createServiceClient(Health, svc.server.url, { token: "database-readiness-token" });
  const readyz = async () => {
    const res = await fetch(`${svc.server.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
  };
  try {
    t.is((await readyz()).status, 200);
    t.is((await health.check({ service: "" })).status, ServingStatus.SERVING);

    await stopProcess(mariadb);
    await eventually(async () => (await readyz()).status === 503, "/readyz 503 with the database down", 10_000);
    const down = await readyz();
    t.not(down.body.checks["database:bank-catalog"], "ok");
    t.is(down.body.checks.bus, "ok");
    t.is((await health.check({ service: "" })).status, ServingStatus.NOT_SERVING);
    t.is((await fetch(`${svc.server.url}/livez`)).status, 200, "alive all the same");

    mariadb = await startMariadb(port, dataDir);
    await eventually(async () => (await readyz()).status === 200, "/readyz 200 with the database back", 20_000);
    t.is((await health.check({ service: "" })).status, ServingStatus.SERVING);
  } finally {
    await svc.stop();
    await stopProcess(mariadb);
    rmSync(home, { recursive: true, force: true });
  }
});
