import test from "ava";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeliveryStatus } from "@payments/contracts/callback";
import { Receiver, Stack, eventually } from "./fixtures.js";

// Outages of the parts callbacks travel through. Each test runs a server of its own (the
// same binaries as the local ones) so stopping it disturbs no other suite.
const NATS_SERVER = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";
const MARIADBD = process.env.MARIADBD_BIN ?? "/usr/sbin/mariadbd";
const MARIADB_INSTALL_DB = process.env.MARIADB_INSTALL_DB_BIN ?? "/usr/bin/mariadb-install-db";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

async function startNats(port: number, storeDir: string): Promise<ChildProcess> {
  const nats = spawn(NATS_SERVER, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: "ignore" });
  await eventually(() => accepting(port), `nats-server on ${port}`, 15_000);
  return nats;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

test("status changes made while NATS is down reach the merchant once it is back, each once", async (t) => {
  if (!existsSync(NATS_SERVER)) return t.fail(`${NATS_SERVER} not found (set NATS_SERVER_BIN)`);
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), "nats-restart-"));
  let nats = await startNats(port, storeDir);
  const stack = new Stack({ natsUrl: `nats://127.0.0.1:${port}` });
  const receiver = await new Receiver().start();
  try {
    await stack.start();
    // A lease far longer than any attempt: a repeat could only come from the outage.
    await stack.startSender({ CALLBACK_TIMEOUT: "10s", CALLBACK_CLAIM_TIMEOUT: "60s" });
    const m = await stack.merchant(receiver.url());
    const before = await stack.deposit(m.id, "before-outage");
    await stack.deposits().confirmDeposit({ depositId: before.id });
    await eventually(() => receiver.received.length === 1, "the callback before the outage");

    await stopProcess(nats);
    // The changes commit; their events wait in the deposit service's outbox.
    const during = await Promise.all(["outage-1", "outage-2", "outage-3"].map((p) => stack.deposit(m.id, p)));
    await Promise.all(during.map((d) => stack.deposits().cancelDeposit({ merchantId: m.id, depositId: d.id })));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    t.is(receiver.received.length, 1, "nothing can travel while NATS is down");

    nats = await startNats(port, storeDir);
    await eventually(() => receiver.received.length >= 4, "the three callbacks after NATS is back", 60_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const perDeposit = receiver.received.map((c) => String(JSON.parse(c.body.toString()).data.transactionId)).sort();
    t.deepEqual(perDeposit, [before.id, ...during.map((d) => d.id)].sort(), "each change once");
    const listed = await stack.callbacks().listEvents({ merchantId: m.id });
    t.true(listed.events.every((e) => e.deliveryStatus === DeliveryStatus.DELIVERED));
  } finally {
    await receiver.stop();
    await stack.stop();
    await stopProcess(nats);
    rmSync(storeDir, { recursive: true, force: true });
  }
});

/** A throwaway MariaDB server on `port`, its data in `dataDir` (kept across restarts). */
async function startMariadb(port: number, dataDir: string): Promise<ChildProcess> {
  const server = spawn(
    MARIADBD,
    ["--no-defaults", `--datadir=${dataDir}`, "--user=root", `--port=${port}`, "--bind-address=127.0.0.1", `--socket=${dataDir}/mysqld.sock`, `--pid-file=${dataDir}/mysqld.pid`, "--skip-log-bin", "--innodb-buffer-pool-size=32M"],
    { stdio: "ignore" },
  );
  await eventually(() => accepting(port), `mariadbd on ${port}`, 30_000);
  return server;
}

test("status changes arriving while the callback-sender's database is down reach the merchant once it is back", async (t) => {
  if (!existsSync(MARIADBD) || !existsSync(MARIADB_INSTALL_DB)) return t.fail(`${MARIADBD} or ${MARIADB_INSTALL_DB} not found`);
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), "callback-db-outage-"));
  const dataDir = join(home, "data");
  execFileSync(MARIADB_INSTALL_DB, ["--no-defaults", `--datadir=${dataDir}`, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"], { stdio: "ignore" });
  let mariadb = await startMariadb(port, dataDir);
  const stack = new Stack();
  const receiver = await new Receiver().start();
  try {
    await stack.start();
    // LOG_LEVEL fatal: every poll during the outage logs its failed claim, as it should.
    await stack.startSender({ DATABASE_URL: `mysql://root@127.0.0.1:${port}/callbacks`, LOG_LEVEL: "fatal" });
    const m = await stack.merchant(receiver.url());
    const before = await stack.deposit(m.id, "before-db-outage");
    await stack.deposits().confirmDeposit({ depositId: before.id });
    await eventually(() => receiver.received.length === 1, "the callback before the outage");

    await stopProcess(mariadb);
    // The events reach the callback-sender, which cannot store them: it does not acknowledge
    // them, so JetStream delivers them again later.
    const during = await Promise.all(["db-outage-1", "db-outage-2", "db-outage-3"].map((p) => stack.deposit(m.id, p)));
    await Promise.all(during.map((d) => stack.deposits().cancelDeposit({ merchantId: m.id, depositId: d.id })));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.is(receiver.received.length, 1, "nothing is sent without the database");

    mariadb = await startMariadb(port, dataDir);
    await eventually(() => receiver.received.length >= 4, "the three callbacks after the database is back", 90_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (receiver.received.length > 4) {
      for (const e of (await stack.callbacks().listEvents({ merchantId: m.id })).events) t.log(e.id, e.attempts.map((a) => [a.number, a.outcome, a.statusCode, a.error]));
    }
    // At least once: an answer that could not be recorded while connections recovered is sent
    // again, as the same event. Every change arrives, under one event id each.
    const idsByDeposit = new Map<string, Set<string>>();
    for (const c of receiver.received) {
      const depositId = String(JSON.parse(c.body.toString()).data.transactionId);
      idsByDeposit.set(depositId, (idsByDeposit.get(depositId) ?? new Set()).add(c.eventId));
    }
    t.deepEqual([...idsByDeposit.keys()].sort(), [before.id, ...during.map((d) => d.id)].sort(), "every change arrived");
    t.true([...idsByDeposit.values()].every((ids) => ids.size === 1), "a repeat is the same event");
    const events = (await stack.callbacks().listEvents({ merchantId: m.id })).events;
    t.true(events.length === 4 && events.every((e) => e.deliveryStatus === DeliveryStatus.DELIVERED));
  } finally {
    await receiver.stop();
    await stack.stop();
    await stopProcess(mariadb);
    rmSync(home, { recursive: true, force: true });
  }
});
