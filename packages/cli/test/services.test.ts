import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import test from "ava";
import { type RunningServices } from "@payments/kit";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { TEST_OPERATOR_PRIVATE_KEY_PEM, testWorkloadKeyPem } from "@payments/testing";
import { cli, singleJson } from "./capture.js";

// The CLI in-process (and once as the real bin) against the real merchant and bank-catalog
// services, all-in-one on SQLite in a temporary directory.

interface Credentials {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
}

let running: RunningServices | undefined;
let dataDir: string;
let url: string;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-test-"));
  running = await startInProcess(["merchant", "bank-catalog"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" },
  });
  url = running.server.url;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function createMerchant(name: string, ...extra: string[]): Promise<Credentials> {
  // Sandbox: a live merchant is two admins' (approval-commands has that flow).
  const r = await cli(["merchant", "create", "--name", name, "--sandbox", ...extra, "--json", "--grpc-url", url]);
  if (r.code !== 0) throw new Error(r.stderr);
  return singleJson(r.stdout) as Credentials;
}

test("merchant create --json prints one object with exactly merchantId, apiKey, apiSecret and webhookSecret", async (t) => {
  const r = await cli(["merchant", "create", "--name", "Acme", "--sandbox", "--ip", "10.0.0.0/8", "--json", "--grpc-url", url]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, "");
  const json = singleJson(r.stdout) as Record<string, unknown>;
  t.deepEqual(Object.keys(json).sort(), ["apiKey", "apiSecret", "merchantId", "webhookSecret"]);
  t.regex(String(json.webhookSecret), /^whsec_[A-Za-z0-9+/]+={0,2}$/);
  for (const value of Object.values(json)) t.true(typeof value === "string" && value.length > 0);
  const { merchantId, apiKey, apiSecret } = json as unknown as Credentials;

  const got = await cli(["merchant", "get", merchantId, "--json", "--grpc-url", url]);
  t.is(got.code, 0, got.stderr);
  const merchant = (singleJson(got.stdout) as { merchant: { name: string; apiKey: string; allowedIps: string[]; status: string } }).merchant;
  t.is(merchant.name, "Acme");
  t.is(merchant.apiKey, apiKey);
  t.deepEqual(merchant.allowedIps, ["10.0.0.0/8"]);
  t.is(merchant.status, "MERCHANT_STATUS_ACTIVE");
  t.false(got.stdout.includes(apiSecret), "the secret is never shown again");
  t.false(got.stdout.includes(String(json.webhookSecret).slice(6)), "nor the webhook secret");
});

test("merchant rotate-secret issues a new secret and the old one keeps a grace period", async (t) => {
  const created = await createMerchant("Rotator");
  const r = await cli(["merchant", "rotate-secret", created.merchantId, "--grace", "1h", "--json", "--grpc-url", url]);
  t.is(r.code, 0, r.stderr);
  const rotated = singleJson(r.stdout) as Credentials;
  t.is(rotated.merchantId, created.merchantId);
  t.is(rotated.apiKey, created.apiKey);
  t.not(rotated.apiSecret, created.apiSecret);

  const shown = await cli(["merchant", "get", created.merchantId, "--grpc-url", url]);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /never \(current\)/);
  t.regex(shown.stdout, /Secrets/);
});

test("merchant rotate-webhook-secret prints the new secret once and when the old one stops signing", async (t) => {
  const created = (await createMerchant("Hooked")) as Credentials & { webhookSecret: string };
  const before = Date.now();
  const r = await cli(["merchant", "rotate-webhook-secret", created.merchantId, "--grace", "1h", "--json", "--grpc-url", url]);
  t.is(r.code, 0, r.stderr);
  const json = singleJson(r.stdout) as { merchantId: string; webhookSecret: string; previousValidUntil: string | null };
  t.deepEqual(Object.keys(json).sort(), ["merchantId", "previousValidUntil", "webhookSecret"]);
  t.is(json.merchantId, created.merchantId);
  t.regex(json.webhookSecret, /^whsec_/);
  t.not(json.webhookSecret, created.webhookSecret);
  const until = Date.parse(json.previousValidUntil!);
  t.true(until >= before + 3600_000 - 2000 && until <= Date.now() + 3600_000 + 2000, "about an hour from now");

  const now = await cli(["merchant", "rotate-webhook-secret", created.merchantId, "--grace", "0", "--json", "--grpc-url", url]);
  t.is(now.code, 0, now.stderr);
  t.is((singleJson(now.stdout) as { previousValidUntil: string | null }).previousValidUntil, null, "grace 0 ends the old ones now");

  const human = await cli(["merchant", "rotate-webhook-secret", created.merchantId, "--grpc-url", url]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /Webhook secret: whsec_/);
  t.regex(human.stdout, /still signs callbacks .* until/);
  t.regex(human.stdout, /shown only once/i);
});

test("merchant rotate-webhook-secret refuses a bad --grace with exit 2 before any call, and an unknown merchant with exit 1", async (t) => {
  // An address nothing listens on: a usage error must come before any call.
  for (const grace of ["soon", "-1h", "1y", "31d"]) {
    const r = await cli(["merchant", "rotate-webhook-secret", "mer_x", "--grace", grace, "--grpc-url", "http://127.0.0.1:1"]);
    t.is(r.code, 2, `--grace ${grace}: ${r.stderr}`);
    t.is(r.stdout, "");
    t.regex(r.stderr, /grace/);
  }
  const unknown = await cli(["merchant", "rotate-webhook-secret", "mer_doesnotexist", "--grpc-url", url]);
  t.is(unknown.code, 1);
  t.is(unknown.stdout, "");
  t.regex(unknown.stderr, /^error: MERCHANT_NOT_FOUND: /);
});

test("merchant set-ips replaces the list and clears it without --ip", async (t) => {
  const { merchantId } = await createMerchant("Networked", "--ip", "10.0.0.0/8");
  const set = await cli(["merchant", "set-ips", merchantId, "--ip", "192.168.1.10", "--ip", "2001:db8::/32", "--json", "--grpc-url", url]);
  t.is(set.code, 0, set.stderr);
  const ips = (singleJson(set.stdout) as { merchant: { allowedIps: string[] } }).merchant.allowedIps;
  t.true(ips.includes("192.168.1.10") || ips.includes("192.168.1.10/32"), ips.join(","));
  t.is(ips.length, 2);

  const cleared = await cli(["merchant", "set-ips", merchantId, "--grpc-url", url]);
  t.is(cleared.code, 0, cleared.stderr);
  t.regex(cleared.stdout, /none/);
});

test("merchant disable and enable change the status", async (t) => {
  const { merchantId } = await createMerchant("Switchable");
  const disabled = await cli(["merchant", "disable", merchantId, "--grpc-url", url]);
  t.is(disabled.code, 0, disabled.stderr);
  t.regex(disabled.stdout, /is now disabled/);
  const json = await cli(["merchant", "get", merchantId, "--json", "--grpc-url", url]);
  t.is((singleJson(json.stdout) as { merchant: { status: string } }).merchant.status, "MERCHANT_STATUS_DISABLED");
  const enabled = await cli(["merchant", "enable", merchantId, "--grpc-url", url]);
  t.regex(enabled.stdout, /is now active/);
});

test("bank list shows the seeded banks with integer limits", async (t) => {
  const r = await cli(["bank", "list", "--grpc-url", url]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /Akbank/);
  t.regex(r.stdout, /0064\s+Türkiye İş Bankası/);

  const json = await cli(["bank", "list", "--json", "--grpc-url", url]);
  const banks = (singleJson(json.stdout) as { banks: Array<{ code: string; minAmount: unknown; maxAmount: unknown }> }).banks;
  t.true(banks.length >= 10);
  t.true(banks.every((b) => typeof b.minAmount === "number" && typeof b.maxAmount === "number"));
});

test("an unknown merchant exits 1 with the service's reason on stderr", async (t) => {
  const r = await cli(["merchant", "get", "mer_doesnotexist", "--grpc-url", url]);
  t.is(r.code, 1);
  t.is(r.stdout, "");
  t.regex(r.stderr, /^error: MERCHANT_NOT_FOUND: /);
});

test("the real bin prints exactly one JSON object for merchant create --json", async (t) => {
  const bin = fileURLToPath(new URL("../bin/cli.mjs", import.meta.url));
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, "merchant", "create", "--name", "Spawned", "--sandbox", "--json", "--grpc-url", url], {
    // Signs as an operator with the test operators' key, as an operator's shell would hold one.
    env: { ...process.env, INTERNAL_API_TOKEN: "", OPERATOR_ASSERTION_PRIVATE_KEY: TEST_OPERATOR_PRIVATE_KEY_PEM, PAYMENTS_OPERATOR: "cli-test", WORKLOAD_KEY: testWorkloadKeyPem("cli") },
    timeout: 30_000,
  });
  t.is(stderr, "");
  const json = singleJson(stdout) as Record<string, unknown>;
  t.deepEqual(Object.keys(json).sort(), ["apiKey", "apiSecret", "merchantId", "webhookSecret"]);
});
