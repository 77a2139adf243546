import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { demoRoot } from "./config.js";

/**
 * The demo's own sandbox merchant. Creating a merchant is an operator's job, not something
 * the merchant API offers, so the first run does what an operator would: the repository's
 * CLI, `merchant create --sandbox --json`, against the merchant service (GRPC_URL, default
 * the all-in-one's 127.0.0.1:9090). The secret is shown once, so it is kept in the data
 * directory and reused on every later run.
 */

export interface MerchantCredentials {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
  /** The Standard Webhooks secret (whsec_…), when the CLI prints one; this shop verifies the X-Signature scheme with apiSecret. */
  webhookSecret?: string;
  /** The gateway these credentials belong to: another gateway gets its own merchant. */
  gatewayUrl: string;
  /** The callback URL registered with the merchant, to notice when DEMO_PUBLIC_URL changes. */
  callbackUrl: string;
}

const run = promisify(execFile);
/** packages/cli/bin/cli.mjs: what `pnpm cli` runs, without pnpm's start-up time. */
const cliPath = join(demoRoot, "..", "..", "packages", "cli", "bin", "cli.mjs");

/** Runs the operator CLI with --json and parses what it prints; a refusal becomes an Error with the CLI's own message. */
async function cli(args: string[]): Promise<unknown> {
  try {
    const { stdout } = await run(process.execPath, [cliPath, "--json", ...args], { env: process.env, timeout: 60_000 });
    return JSON.parse(stdout);
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    const said = `${e.stderr ?? ""}${e.stdout ?? ""}`.trim() || e.message;
    throw new Error(`pnpm cli ${args.join(" ")} failed: ${said}`, { cause: err });
  }
}

function file(dataDir: string): string {
  return join(dataDir, "merchant.json");
}

export function loadCredentials(dataDir: string): MerchantCredentials | undefined {
  try {
    return JSON.parse(readFileSync(file(dataDir), "utf8")) as MerchantCredentials;
  } catch {
    return undefined;
  }
}

function save(dataDir: string, credentials: MerchantCredentials): void {
  mkdirSync(dataDir, { recursive: true });
  // Owner-only: the API secret signs requests and verifies callbacks.
  writeFileSync(file(dataDir), `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
}

/** `merchant create --sandbox`: a new merchant whose deposits go to the seeded sandbox accounts and can be simulated. */
export async function createMerchant(dataDir: string, gatewayUrl: string, callbackUrl: string): Promise<MerchantCredentials> {
  const created = (await cli(["merchant", "create", "--name", "Demo Shop", "--sandbox", "--callback-url", callbackUrl])) as {
    merchantId: string;
    apiKey: string;
    apiSecret: string;
    webhookSecret?: string;
  };
  const credentials: MerchantCredentials = {
    merchantId: created.merchantId,
    apiKey: created.apiKey,
    apiSecret: created.apiSecret,
    ...(created.webhookSecret ? { webhookSecret: created.webhookSecret } : {}),
    gatewayUrl,
    callbackUrl,
  };
  save(dataDir, credentials);
  return credentials;
}

/** `merchant set-callback`, when the shop now has another public address than the one registered. */
export async function updateCallbackUrl(dataDir: string, credentials: MerchantCredentials, callbackUrl: string): Promise<MerchantCredentials> {
  await cli(["merchant", "set-callback", credentials.merchantId, callbackUrl]);
  const updated = { ...credentials, callbackUrl };
  save(dataDir, updated);
  return updated;
}
