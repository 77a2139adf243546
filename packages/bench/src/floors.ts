import { randomBytes } from "node:crypto";
import type { Merchant } from "./load.js";
import type { ScratchResources } from "./scratch-resources.js";
import { nodeEntry, spawnServer, type ServerProcess } from "./server-process.js";

export interface RunningFloor {
  kind: "hmac" | "db";
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

export async function startFloor(kind: "hmac" | "db", merchants: readonly Merchant[], resources: ScratchResources): Promise<RunningFloor> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FLOOR_KIND: kind,
    FLOOR_CREDENTIALS: JSON.stringify(merchants),
    ...(kind === "db" ? { FLOOR_DATABASE_URL: resources.database("floor") } : {}),
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
