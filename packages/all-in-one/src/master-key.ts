import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "@payments/kit";

/**
 * The merchant service seals API secrets with MASTER_KEY. For a newcomer's `pnpm start`
 * the key is made once and kept beside the data it protects; production sets MASTER_KEY.
 */
export function resolveMasterKey(env: Record<string, string | undefined>, dataDir: string, logger: Logger): string {
  if (env.MASTER_KEY) return env.MASTER_KEY;
  const file = join(dataDir, "master.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString("hex");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  logger.warn({ file }, "MASTER_KEY is not set: generated one for this data directory (set MASTER_KEY in production)");
  return key;
}
