import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { startServices, type RunningServices } from "@payments/kit";
// The CLI has no runtime dependency on the services; the tests start the real one.
import { merchantModule } from "@payments/merchant-service";
import { cli, singleJson } from "./capture.js";

// `merchant set-payment-rules` and how `merchant show`/`list` display the rules, in-process
// against the real merchant service, all-in-one on SQLite in a temporary directory.

interface RulesJson {
  merchant: { id: string; underpayment: string; overpayment: string; latePayment: string };
}

let running: RunningServices;
let dataDir: string;
let url: string;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-merchant-test-"));
  running = await startServices([merchantModule], {
    mode: "all-in-one",
    env: { GRPC_PORT: "0", DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" },
  });
  url = running.server.url;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function createMerchant(name: string): Promise<string> {
  const r = await cli(["merchant", "create", "--name", name, "--json", "--grpc-url", url]);
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
