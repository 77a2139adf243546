import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { createServiceClient } from "@payments/testing";
import { type RunningServices } from "@payments/kit";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// reconcile with the merchant ledger's side: in-process against the real merchant,
// bank-catalog, deposit and payout services, all-in-one on SQLite in a temporary directory of
// its own (reconcile sees every merchant, so nothing else shares it). A sandbox deposit paid
// through the sandbox is a real transfer, completion and ledger credit; then a balance row is
// changed behind the ledger's back and reconcile must name the merchant and exit 1.

interface ReconcileJson {
  balanced: boolean;
  accounts: Array<{ iban: string; difference: number; discrepancies: string[] }>;
  merchants: Array<{ merchantId: string; currency: string; available: number; held: number; ledgerAvailable: number; ledgerHeld: number; balanced: boolean }>;
  discrepancies: string[];
  credits: Array<{ depositId: string; merchantId: string; amount: number; currency: string }>;
}

let running: RunningServices | undefined;
let dataDir: string | undefined;
let url: string;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-reconcile-ledger-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s", PAYOUT_WORKER: "0" },
    receivingAccounts: true,
  });
  url = running.server.url;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const reconcile = (args: readonly string[] = []) => cli(["reconcile", ...args, "--grpc-url", url]);

test.serial("reconcile checks the merchant ledger: balanced (exit 0) after a completed deposit; a tampered balance row is named (exit 1)", async (t) => {
  const merchantId = (await createServiceClient(MerchantService, url).createMerchant({ name: "Reconcile Shop", sandbox: true })).merchant!.id;
  const deposits = createServiceClient(DepositService, url);
  const payouts = createServiceClient(PayoutService, url);
  const created = (
    await deposits.createDeposit({ merchantId, processId: "order-1", amount: 25_000n, customer: { id: "cust-1", name: "Ayşe Yılmaz", username: "ayse1" } })
  ).deposit!;
  await deposits.sandboxPayDeposit({ merchantId, depositId: created.id });
  t.is((await deposits.getDeposit({ merchantId, key: { case: "depositId", value: created.id } })).deposit!.status, DepositStatus.COMPLETED);
  // The payout service credits the deposit from its completion event: wait for it, as an
  // operator would wait before reconciling a deposit completed a moment ago.
  for (let i = 0; i < 200; i++) {
    const { balances } = await payouts.getBalances({ merchantId });
    if (balances.some((b) => b.currency === "TRY" && b.available === 25_000n)) break;
    await sleep(25);
  }

  const ok = await reconcile(["--json"]);
  t.is(ok.code, 0, ok.stderr + ok.stdout);
  const res = singleJson(ok.stdout) as ReconcileJson;
  t.deepEqual(Object.keys(res), ["balanced", "accounts", "merchants", "discrepancies", "dismissed", "credits"]);
  t.true(res.balanced);
  t.deepEqual(res.discrepancies, []);
  t.deepEqual(res.credits, [{ depositId: created.id, merchantId, amount: 25_000, currency: "TRY" }]);
  t.deepEqual(res.merchants, [{ merchantId, currency: "TRY", available: 25_000, held: 0, ledgerAvailable: 25_000, ledgerHeld: 0, balanced: true }]);
  const human = await reconcile();
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /Merchant ledger: 1 balance checked against their entries, 1 credited deposit against the ledger\./);
  t.regex(human.stdout, /\nBalanced\.\n$/);

  // A hand-made change of the balance row, behind the ledger's back.
  // The payout service's own database (knex), typed only as far as this test uses it.
  const db = (running!.contexts.get("payout") as { db: (table: string) => { where(q: object): { update(v: object): Promise<number> } } }).db;
  await db("balances").where({ merchant_id: merchantId, currency: "TRY" }).update({ available: 26_000 });

  const bad = await reconcile(["--json"]);
  t.is(bad.code, 1, bad.stderr + bad.stdout);
  const badRes = singleJson(bad.stdout) as ReconcileJson;
  t.false(badRes.balanced);
  t.deepEqual(badRes.merchants, [{ merchantId, currency: "TRY", available: 26_000, held: 0, ledgerAvailable: 25_000, ledgerHeld: 0, balanced: false }]);
  // The receiving accounts still add up: it is the merchant side that does not.
  t.true(badRes.accounts.every((a) => a.difference === 0 && a.discrepancies.length === 0));
  t.true(bad.stderr.includes(merchantId), bad.stderr);

  const badHuman = await reconcile();
  t.is(badHuman.code, 1);
  t.regex(badHuman.stdout, /Merchant balances that differ from their ledger:/);
  t.regex(badHuman.stdout, new RegExp(`${merchantId}\\s+TRY\\s+`));
  t.regex(badHuman.stdout, /Not balanced: 0 accounts, 1 merchant balance, 0 ledger discrepancies\.\n$/);

  // A ledger credit of another amount than the deposit's: a discrepancy naming the deposit.
  await db("balances").where({ merchant_id: merchantId, currency: "TRY" }).update({ available: 24_000 });
  await db("ledger_entries").where({ kind: "deposit_credit", transaction_id: created.id }).update({ available_delta: 24_000 });
  const wrong = await reconcile(["--json"]);
  t.is(wrong.code, 1);
  const wrongRes = singleJson(wrong.stdout) as ReconcileJson;
  t.false(wrongRes.balanced);
  t.true(wrongRes.merchants.every((m) => m.balanced));
  t.is(wrongRes.discrepancies.length, 1);
  t.true(wrongRes.discrepancies[0]!.includes(created.id), wrongRes.discrepancies[0]);
});
