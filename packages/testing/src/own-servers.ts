import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForPort } from "./ports.js";

// Servers of one test's own, which it may stop and start again: a NATS outage or a database
// outage disturbs no other suite.

/** The nats-server binary for tests that run a server of their own: NATS_SERVER_BIN, default Debian's. */
export const natsServerBin = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";

/** The MariaDB binaries the outage tests start their own servers from (Debian's mariadb-server). */
export const mariadbdBin = process.env.MARIADBD_BIN ?? "/usr/sbin/mariadbd";
export const mariadbInstallDbBin = process.env.MARIADB_INSTALL_DB_BIN ?? "/usr/bin/mariadb-install-db";

/** SIGTERM, and wait for the exit (at once when it already exited). */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** A server of one test's own, which it may stop and start again (same port, same data). */
interface OwnServer {
  port: number;
  /** Stops the server; its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data (after stop()). */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

/** A JetStream server of one test's own. */
export interface OwnNatsServer extends OwnServer {
  url: string;
  storeDir: string;
}

/**
 * Runs `nats-server -js` on a free port with a store in a temporary directory, so stopping
 * it disturbs no other suite. Throws when natsServerBin is missing.
 */
export async function startNatsServer(): Promise<OwnNatsServer> {
  if (!existsSync(natsServerBin)) throw new Error(`${natsServerBin} not found (set NATS_SERVER_BIN)`);
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), "nats-own-"));
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const spawned = spawn(natsServerBin, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: "ignore" });
    const failed = new Promise<never>((_, reject) => spawned.once("error", reject));
    child = spawned;
    await Promise.race([waitForPort(port, "nats-server"), failed]);
  };
  const stop = async () => {
    if (child) await stopProcess(child);
  };
  try {
    await start();
  } catch (err) {
    rmSync(storeDir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** A throwaway MariaDB server of a test's own. */
export interface OwnMariadbServer extends OwnServer {
  /** mysql://root@127.0.0.1:<port>/<database> */
  url(database: string): string;
}

export async function startMariadbServer(): Promise<OwnMariadbServer> {
  if (!existsSync(mariadbdBin) || !existsSync(mariadbInstallDbBin)) throw new Error(`${mariadbdBin} or ${mariadbInstallDbBin} not found (Debian's mariadb-server)`);
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), "own-mariadb-"));
  const dataDir = join(home, "data");
  execFileSync(mariadbInstallDbBin, ["--no-defaults", `--datadir=${dataDir}`, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"], { stdio: "ignore" });
  let server: ChildProcess | undefined;
  const start = async () => {
    server = spawn(
      mariadbdBin,
      ["--no-defaults", `--datadir=${dataDir}`, "--user=root", `--port=${port}`, "--bind-address=127.0.0.1", `--socket=${dataDir}/mysqld.sock`, `--pid-file=${dataDir}/mysqld.pid`, "--skip-log-bin", "--innodb-buffer-pool-size=32M"],
      { stdio: "ignore" },
    );
    await waitForPort(port, "mariadbd", 30_000);
  };
  const stop = async () => {
    if (server) await stopProcess(server);
    server = undefined;
  };
  await start();
  return {
    port,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
