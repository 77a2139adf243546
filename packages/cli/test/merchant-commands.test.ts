import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { type RunningServices } from "@payments/kit";
// The CLI has no runtime dependency on the services; the tests start the real one, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// `merchant set-payment-rules`, `merchant create --display-name`, `merchant set-display-name`
// and how `merchant show`/`list` display them, in-process against the real merchant service,
// all-in-one on SQLite in a temporary directory.

interface RulesJson {
  merchant: { id: string; underpayment: string; overpayment: string; latePayment: string };
}

let running: RunningServices | undefined;
let dataDir: string;
let url: string;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-merchant-test-"));
  running = await startInProcess(["merchant"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" },
  });
  url = running.server.url;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function createMerchant(name: string): Promise<string> {
  // Sandbox: these are about the CLI's words, and a live merchant is two admins' (approval-commands).
  const r = await cli(["merchant", "create", "--name", name, "--sandbox", "--json", "--grpc-url", url]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (singleJson(r.stdout) as { merchantId: string }).merchantId;
}

test("merchant show and list display the default payment rules", async (t) => {
  const merchantId = await createMerchant("Rules Default");
  const shown = await cli(["merchant", "show", merchantId, "--grpc-url", url]);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /payment rules\s+underpayment review, overpayment complete, late payment review/);

  const json = await cli(["merchant", "get", merchantId, "--json", "--grpc-url", url]);
  t.like((singleJson(json.stdout) as RulesJson).merchant, {
    underpayment: "UNDERPAYMENT_RULE_REVIEW",
    overpayment: "OVERPAYMENT_RULE_COMPLETE",
    latePayment: "LATE_PAYMENT_RULE_REVIEW",
  });

  const list = await cli(["merchant", "list", "--grpc-url", url]);
  t.is(list.code, 0, list.stderr);
  t.regex(list.stdout, /UNDER\s+OVER\s+LATE/);
  const row = list.stdout.split("\n").find((line) => line.startsWith(merchantId));
  t.regex(row ?? "", /\breview\s+complete\s+review\b/);
});

test("merchant set-payment-rules changes only the rules given", async (t) => {
  const merchantId = await createMerchant("Rules Set");
  const one = await cli(["merchant", "set-payment-rules", merchantId, "--late-payment", "return", "--grpc-url", url]);
  t.is(one.code, 0, one.stderr);
  t.is(one.stdout, `Payment rules of ${merchantId}: underpayment review, overpayment complete, late payment return.\n`);

  const all = await cli(["merchant", "set-payment-rules", merchantId, "--underpayment", "complete", "--overpayment", "review", "--late-payment", "complete", "--json", "--grpc-url", url]);
  t.is(all.code, 0, all.stderr);
  t.like((singleJson(all.stdout) as RulesJson).merchant, {
    id: merchantId,
    underpayment: "UNDERPAYMENT_RULE_COMPLETE",
    overpayment: "OVERPAYMENT_RULE_REVIEW",
    latePayment: "LATE_PAYMENT_RULE_COMPLETE",
  });

  const list = await cli(["merchant", "list", "--json", "--grpc-url", url]);
  const listed = (singleJson(list.stdout) as { merchants: RulesJson["merchant"][] }).merchants.find((m) => m.id === merchantId);
  t.like(listed, { underpayment: "UNDERPAYMENT_RULE_COMPLETE", overpayment: "OVERPAYMENT_RULE_REVIEW", latePayment: "LATE_PAYMENT_RULE_COMPLETE" });
});

test("merchant set-payment-rules refuses a bad value or no option with exit 2 before any call, and an unknown merchant with exit 1", async (t) => {
  // An address nothing listens on: a usage error must come before any call.
  const nowhere = "http://127.0.0.1:1";
  for (const [option, value, allowed] of [
    ["--underpayment", "return", /--underpayment.*expected one of: review, complete\./],
    ["--overpayment", "maybe", /--overpayment.*expected one of: complete, review\./],
    ["--late-payment", "refund", /--late-payment.*expected one of: review, complete, return\./],
  ] as const) {
    const r = await cli(["merchant", "set-payment-rules", "mer_x", option, value, "--grpc-url", nowhere]);
    t.is(r.code, 2, `${option} ${value}: ${r.stderr}`);
    t.is(r.stdout, "");
    t.regex(r.stderr, allowed);
  }
  const none = await cli(["merchant", "set-payment-rules", "mer_x", "--grpc-url", nowhere]);
  t.is(none.code, 2, none.stderr);
  t.regex(none.stderr, /--underpayment, --overpayment, --late-payment/);

  const unknown = await cli(["merchant", "set-payment-rules", "mer_doesnotexist", "--overpayment", "review", "--grpc-url", url]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /^error: MERCHANT_NOT_FOUND: /);
});

interface DisplayNameJson {
  merchant: { id: string; name: string; displayName: string };
}

test("merchant create --display-name stores the name customers see, and merchant show prints it; without it, show prints the name", async (t) => {
  const created = await cli(["merchant", "create", "--name", "Ornek Magazacilik A.S.", "--display-name", "Örnek Mağaza", "--sandbox", "--grpc-url", url]);
  t.is(created.code, 0, created.stderr);
  t.regex(created.stdout, /display name\s+Örnek Mağaza\n/);
  const merchantId = /id\s+(mer_\S+)/.exec(created.stdout)?.[1] ?? "";
  const shown = await cli(["merchant", "show", merchantId, "--grpc-url", url]);
  t.regex(shown.stdout, /name\s+Ornek Magazacilik A\.S\.\n/);
  t.regex(shown.stdout, /display name\s+Örnek Mağaza\n/);
  const json = await cli(["merchant", "get", merchantId, "--json", "--grpc-url", url]);
  t.like((singleJson(json.stdout) as DisplayNameJson).merchant, { name: "Ornek Magazacilik A.S.", displayName: "Örnek Mağaza" });

  const plain = await createMerchant("Plain Shop");
  const plainShown = await cli(["merchant", "show", plain, "--grpc-url", url]);
  t.regex(plainShown.stdout, /display name\s+Plain Shop\n/);
});

test("merchant set-display-name sets it; --clear or an empty name goes back to the merchant's name", async (t) => {
  const merchantId = await createMerchant("Display Shop");
  const set = await cli(["merchant", "set-display-name", merchantId, "Vitrin Mağaza", "--grpc-url", url]);
  t.is(set.code, 0, set.stderr);
  t.is(set.stdout, `Display name of ${merchantId}: Vitrin Mağaza\n`);
  t.regex((await cli(["merchant", "show", merchantId, "--grpc-url", url])).stdout, /display name\s+Vitrin Mağaza\n/);

  const cleared = await cli(["merchant", "set-display-name", merchantId, "--clear", "--grpc-url", url]);
  t.is(cleared.code, 0, cleared.stderr);
  t.is(cleared.stdout, `Customers of ${merchantId} see its name on the checkout page: Display Shop\n`);

  await cli(["merchant", "set-display-name", merchantId, "Vitrin Mağaza", "--grpc-url", url]);
  const empty = await cli(["merchant", "set-display-name", merchantId, "", "--json", "--grpc-url", url]);
  t.is(empty.code, 0, empty.stderr);
  t.like((singleJson(empty.stdout) as DisplayNameJson).merchant, { id: merchantId, name: "Display Shop", displayName: "Display Shop" });
});

test("merchant set-display-name without a name or --clear, or with both, exits 2 before any call; a refused name exits 1 naming display_name", async (t) => {
  const nowhere = "http://127.0.0.1:1";
  const none = await cli(["merchant", "set-display-name", "mer_x", "--grpc-url", nowhere]);
  t.is(none.code, 2, none.stderr);
  t.regex(none.stderr, /--clear/);
  const both = await cli(["merchant", "set-display-name", "mer_x", "Shop", "--clear", "--grpc-url", nowhere]);
  t.is(both.code, 2, both.stderr);
  t.regex(both.stderr, /not both/);

  const merchantId = await createMerchant("Refused Shop");
  const long = await cli(["merchant", "set-display-name", merchantId, "x".repeat(101), "--grpc-url", url]);
  t.is(long.code, 1);
  t.regex(long.stderr, /^error: VALIDATION_ERROR: display_name: must be at most 100 characters.*\(field: display_name\)/);
  const created = await cli(["merchant", "create", "--name", "Bidi Shop", "--display-name", "Shop\u202E", "--sandbox", "--grpc-url", url]);
  t.is(created.code, 1);
  t.regex(created.stderr, /display_name: must not contain control characters or bidirectional overrides/);
});
