import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { Merchant } from "./load.js";
import type { ScratchResources } from "./scratch-resources.js";
import { nodeEntry, repoRoot, spawnServer, type ServerProcess } from "./server-process.js";

/** hmac: the signature check only; db: plus one knex transaction per write; raw: the same transaction through mysql2 itself (floor-server.ts). */
export type FloorKind = "hmac" | "db" | "raw";

export interface RunningFloor {
  kind: FloorKind;
  url: string;
  server: ServerProcess;
  coldStartMs: number;
}

/** Made-up credentials the floors accept: the same count as the product's merchants, so lookups spread alike. */
export function floorMerchants(count: number): Merchant[] {
  return Array.from({ length: count }, (_, i) => ({
    merchantId: `mer_floor${i}`,
    apiKey: `pk_${randomBytes(16).toString("hex")}`,
    apiSecret: `sk_${randomBytes(32).toString("hex")}`,
  }));
}

export async function startFloor(kind: FloorKind, merchants: readonly Merchant[], resources: ScratchResources): Promise<RunningFloor> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FLOOR_KIND: kind,
    FLOOR_CREDENTIALS: JSON.stringify(merchants),
    ...(kind === "hmac" ? {} : await floorDatabases(resources, kind)),
  };
  delete env.NODE_OPTIONS;
  const server = spawnServer(`${kind}-floor`, nodeEntry("packages/bench", "floor-server"), env);
  try {
    const { url, at } = await server.waitForLine((line) => {
      if (!line.startsWith("{")) return undefined;
      const parsed = JSON.parse(line) as { ready?: boolean; url?: string };
      return parsed.ready && parsed.url ? { url: parsed.url, at: performance.now() } : undefined;
    }, 60_000);
    return { kind, url, server, coldStartMs: Math.round(at - server.spawnedAt) };
  } catch (err) {
    await server.stop(5_000);
    throw err;
  }
}

/**
 * A storing floor's databases (each of the db and raw floors its own two), made by the real
 * services' own migrations (their `migrate up` command, compiled when built), never by a
 * hand-copied schema that drifts from the product's.
 */
async function floorDatabases(resources: ScratchResources, kind: "db" | "raw"): Promise<{ FLOOR_DEPOSIT_DATABASE_URL: string; FLOOR_PAYOUT_DATABASE_URL: string }> {
  const prefix = kind === "db" ? "floor" : "floor_raw";
  const deposits = resources.database(`${prefix}_deposit`);
  const payouts = resources.database(`${prefix}_payout`);
  await Promise.all([migrate("services/deposit", deposits), migrate("services/payout", payouts)]);
  return { FLOOR_DEPOSIT_DATABASE_URL: deposits, FLOOR_PAYOUT_DATABASE_URL: payouts };
}

function migrate(service: string, databaseUrl: string): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [...nodeEntry(service, "migrate"), "up"], { cwd: repoRoot, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${service} migrate up exited ${code}: ${stderr.trim().slice(-2000)}`))));
  });
}
