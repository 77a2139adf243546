import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { type RunningServices } from "@payments/kit";
// The CLI has no runtime dependency on the services; the tests start the real one, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// `merchant key create|list|rotate|revoke|trust`, in-process against the real merchant service
// (all-in-one on SQLite in a temporary directory), as an admin unless a test says otherwise.

interface KeyJson {
  id: string;
  merchantId: string;
  label?: string;
  scopes: string[];
  trusted?: boolean;
  primary?: boolean;
  revokedAt?: string;
  revokedBy?: string;
  secrets?: Array<{ id: string; valid?: boolean; expiresAt?: string }>;
}

let running: RunningServices | undefined;
let dataDir: string;
let url: string;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-merchant-key-test-"));
  running = await startInProcess(["merchant"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" },
  });
  url = running.server.url;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function createMerchant(name: string): Promise<{ merchantId: string; apiKey: string }> {
  // Sandbox: a live merchant is two admins' (approval-commands).
  const r = await cli(["merchant", "create", "--name", name, "--sandbox", "--json", "--grpc-url", url]);
  if (r.code !== 0) throw new Error(r.stderr);
  return singleJson(r.stdout) as { merchantId: string; apiKey: string };
}

async function listKeys(merchantId: string): Promise<KeyJson[]> {
  const r = await cli(["merchant", "key", "list", "--merchant", merchantId, "--json", "--grpc-url", url]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (singleJson(r.stdout) as { keys: KeyJson[] }).keys;
}

test("merchant key create issues a key with the scopes given and prints its secret once; list shows it beside the primary, without secrets", async (t) => {
  const { merchantId, apiKey: primary } = await createMerchant("Key Shop");
  const text = await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "checkout server", "--scope", "read", "--scope", "Deposits", "--grpc-url", url]);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, new RegExp(`^API key created for ${merchantId}\\.\\n`));
  t.regex(text.stdout, /name\s+checkout server\n/);
  t.regex(text.stdout, /scopes\s+read, deposits\n/);
  t.regex(text.stdout, /trusted for automatic payouts\s+no\n/);
  t.regex(text.stdout, /created\s+\S+ by cli-test\n/);
  t.regex(text.stdout, /status\s+active\n/);
  const secret = /API secret: (\S+)/.exec(text.stdout)?.[1] ?? "";
  t.true(secret.length >= 32, text.stdout);
  t.regex(text.stdout, /shown only once/);
  const madeId = /API key\s+(pk_\S+)/.exec(text.stdout)?.[1] ?? "";
  t.regex(madeId, /^pk_/);

  const json = await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "payouts", "--scope", "read,withdrawals", "--json", "--grpc-url", url]);
  t.is(json.code, 0, json.stderr);
  const made = singleJson(json.stdout) as { merchantId: string; apiKey: string; apiSecret: string; label: string; scopes: string[] };
  t.like(made, { merchantId, label: "payouts", scopes: ["read", "withdrawals"] });
  t.regex(made.apiKey, /^pk_/);
  t.true(made.apiSecret.length >= 32);

  const keys = await listKeys(merchantId);
  // The primary first; keys made in the same instant in no order the test relies on.
  t.deepEqual(keys[0] && [keys[0].id, keys[0].primary, keys[0].scopes], [primary, true, ["read", "deposits", "withdrawals"]]);
  t.deepEqual(
    keys
      .slice(1)
      .map((k) => [k.id, k.primary === true, k.scopes])
      .sort(([a], [b]) => String(a).localeCompare(String(b))),
    [
      [madeId, false, ["read", "deposits"]],
      [made.apiKey, false, ["read", "withdrawals"]],
    ].sort(([a], [b]) => String(a).localeCompare(String(b))),
  );
  t.false(JSON.stringify(keys).includes(secret), "no secret is listed");
  t.false(JSON.stringify(keys).includes(made.apiSecret), "no secret is listed");

  const table = await cli(["merchant", "key", "list", "--merchant", merchantId, "--grpc-url", url]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^API KEY\s+NAME\s+SCOPES\s+TRUSTED\s+SECRETS\s+CREATED\s+STATUS\n/);
  t.regex(table.stdout, new RegExp(`${primary}\\s+primary\\s+read,deposits,withdrawals\\s+no\\s+1\\s`));
  t.regex(table.stdout, new RegExp(`${madeId}\\s+checkout server\\s+read,deposits\\s+no\\s+1\\s`));
  t.false(table.stdout.includes(secret));
});

test("merchant key create: a bad or missing scope is a usage error before any call, and nothing is created", async (t) => {
  const { merchantId } = await createMerchant("Bad Scope Shop");
  for (const scope of ["refunds", "read,admin", ","]) {
    const r = await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "x", "--scope", scope, "--grpc-url", url]);
    t.is(r.code, 2, `${scope}: ${r.stderr}`);
    t.is(r.stdout, "");
    t.regex(r.stderr, /--scope.*expected one of: read, deposits, withdrawals\./);
  }
  const none = await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "x", "--grpc-url", url]);
  t.is(none.code, 2, none.stderr);
  t.regex(none.stderr, /--scope/);
  t.is((await listKeys(merchantId)).length, 1, "only the primary key");

  const unknown = await cli(["merchant", "key", "create", "--merchant", "mer_doesnotexist", "--label", "x", "--scope", "read", "--grpc-url", url]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /MERCHANT_NOT_FOUND/);
});

test("merchant key rotate issues a new current secret of the key named (or the primary) and prints it once; the older one keeps working for the grace", async (t) => {
  const { merchantId, apiKey: primary } = await createMerchant("Rotate Key Shop");
  const made = singleJson((await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "ci", "--scope", "read", "--json", "--grpc-url", url])).stdout) as {
    apiKey: string;
    apiSecret: string;
  };

  const text = await cli(["merchant", "key", "rotate", "--merchant", merchantId, "--key", made.apiKey, "--grace", "1h", "--grpc-url", url]);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, new RegExp(`^New secret issued for API key ${made.apiKey} of ${merchantId}\\.\\n`));
  t.regex(text.stdout, /Previous secret \S+ keeps working until /);
  const secret = /API secret: (\S+)/.exec(text.stdout)?.[1] ?? "";
  t.true(secret.length >= 32);
  t.not(secret, made.apiSecret);
  t.regex(text.stdout, /shown only once/);

  const json = await cli(["merchant", "key", "rotate", "--merchant", merchantId, "--json", "--grpc-url", url]);
  t.is(json.code, 0, json.stderr);
  const rotated = singleJson(json.stdout) as { merchantId: string; apiKey: string; apiSecret: string };
  t.like(rotated, { merchantId, apiKey: primary });
  t.true(rotated.apiSecret.length >= 32);

  const keys = await listKeys(merchantId);
  const ci = keys.find((k) => k.id === made.apiKey);
  t.is(ci?.secrets?.filter((s) => s.valid === true).length, 2, "the new secret and the old one within its grace");
  t.false(JSON.stringify(keys).includes(secret));

  const bad = await cli(["merchant", "key", "rotate", "--merchant", merchantId, "--key", "pk_nope", "--grpc-url", url]);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /API_KEY_NOT_FOUND/);
  const badGrace = await cli(["merchant", "key", "rotate", "--merchant", merchantId, "--grace", "soon", "--grpc-url", "http://127.0.0.1:1"]);
  t.is(badGrace.code, 2, badGrace.stderr);
});

test("merchant key revoke ends a key; it is listed as revoked, cannot be rotated, and the primary cannot be revoked", async (t) => {
  const { merchantId, apiKey: primary } = await createMerchant("Revoke Key Shop");
  const made = singleJson((await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "old", "--scope", "deposits", "--json", "--grpc-url", url])).stdout) as { apiKey: string };

  const text = await cli(["merchant", "key", "revoke", "--merchant", merchantId, "--key", made.apiKey, "--grpc-url", url]);
  t.is(text.code, 0, text.stderr);
  t.is(text.stdout, `API key ${made.apiKey} of ${merchantId} is revoked: requests signed with it are refused.\n`);

  const keys = await listKeys(merchantId);
  const revoked = keys.find((k) => k.id === made.apiKey);
  t.truthy(revoked?.revokedAt);
  t.is(revoked?.revokedBy, "cli-test");
  const table = await cli(["merchant", "key", "list", "--merchant", merchantId, "--grpc-url", url]);
  t.regex(table.stdout, new RegExp(`${made.apiKey}\\s+old\\s+deposits\\s+no\\s+0\\s+\\S+\\s+revoked `));

  const again = await cli(["merchant", "key", "rotate", "--merchant", merchantId, "--key", made.apiKey, "--grpc-url", url]);
  t.is(again.code, 1);
  t.regex(again.stderr, /API_KEY_REVOKED/);

  const primaryRevoke = await cli(["merchant", "key", "revoke", "--merchant", merchantId, "--key", primary, "--grpc-url", url]);
  t.is(primaryRevoke.code, 1);
  t.is(primaryRevoke.stdout, "");
  t.regex(primaryRevoke.stderr, /PRIMARY_KEY/);
  t.false((await listKeys(merchantId)).find((k) => k.id === primary)?.revokedAt !== undefined, "the primary key stays");

  const json = await cli(["merchant", "key", "revoke", "--merchant", merchantId, "--key", "pk_missing", "--json", "--grpc-url", url]);
  t.is(json.code, 1);
  t.regex(json.stderr, /API_KEY_NOT_FOUND/);
});

test("merchant key trust marks a key that can withdraw for automatic payouts and --off clears it; a key without withdrawals is refused", async (t) => {
  const { merchantId } = await createMerchant("Trust Key Shop");
  const payouts = singleJson((await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "payouts", "--scope", "withdrawals", "--json", "--grpc-url", url])).stdout) as {
    apiKey: string;
  };
  const reader = singleJson((await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "reader", "--scope", "read", "--json", "--grpc-url", url])).stdout) as { apiKey: string };

  const on = await cli(["merchant", "key", "trust", "--merchant", merchantId, "--key", payouts.apiKey, "--grpc-url", url]);
  t.is(on.code, 0, on.stderr);
  t.regex(on.stdout, new RegExp(`^API key ${payouts.apiKey} of ${merchantId} is trusted for automatic payouts`));
  t.true((await listKeys(merchantId)).find((k) => k.id === payouts.apiKey)?.trusted);

  const off = await cli(["merchant", "key", "trust", "--merchant", merchantId, "--key", payouts.apiKey, "--off", "--json", "--grpc-url", url]);
  t.is(off.code, 0, off.stderr);
  const changed = singleJson(off.stdout) as KeyJson;
  t.is(changed.id, payouts.apiKey);
  t.not(changed.trusted, true);
  t.not((await listKeys(merchantId)).find((k) => k.id === payouts.apiKey)?.trusted, true);

  const refused = await cli(["merchant", "key", "trust", "--merchant", merchantId, "--key", reader.apiKey, "--grpc-url", url]);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /KEY_CANNOT_WITHDRAW/);
  t.not((await listKeys(merchantId)).find((k) => k.id === reader.apiKey)?.trusted, true);
});

test("merchant key create, revoke and trust are an admin's: another operator role is refused and nothing changes; listing is a viewer's", async (t) => {
  const { merchantId, apiKey: primary } = await createMerchant("Role Key Shop");
  const operator = { PAYMENTS_OPERATOR_ROLE: "operator" };
  const create = await cli(["merchant", "key", "create", "--merchant", merchantId, "--label", "x", "--scope", "read", "--grpc-url", url], operator);
  t.is(create.code, 1);
  t.is(create.stdout, "");
  t.regex(create.stderr, /PERMISSION_DENIED/);
  const trust = await cli(["merchant", "key", "trust", "--merchant", merchantId, "--key", primary, "--grpc-url", url], operator);
  t.is(trust.code, 1);
  t.regex(trust.stderr, /PERMISSION_DENIED/);
  const rotate = await cli(["merchant", "key", "rotate", "--merchant", merchantId, "--grpc-url", url], { PAYMENTS_OPERATOR_ROLE: "finance" });
  t.is(rotate.code, 1);
  t.regex(rotate.stderr, /PERMISSION_DENIED/);
  t.false(rotate.stdout.includes("API secret"));

  const list = await cli(["merchant", "key", "list", "--merchant", merchantId, "--json", "--grpc-url", url], { PAYMENTS_OPERATOR_ROLE: "viewer" });
  t.is(list.code, 0, list.stderr);
  const keys = (singleJson(list.stdout) as { keys: KeyJson[] }).keys;
  t.deepEqual(keys.map((k) => k.id), [primary]);
  t.not(keys[0]?.trusted, true, "the primary key was not trusted by the refused call");
  t.is(keys[0]?.secrets?.length, 1, "nor rotated");
});
