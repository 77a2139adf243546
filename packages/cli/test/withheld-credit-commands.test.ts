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

// `withheld-credit list|credit|dismiss` and what `reconcile` says of a withheld credit, in-process
// against the real merchant, bank-catalog, deposit and payout services (all-in-one on SQLite in
// a temporary directory of its own: reconcile sees every merchant). A sandbox merchant's deposits
// are paid by real transfers on its sandbox receiving account after the merchant went live (its
// row changed in the merchant service's database, the race SetSandbox itself refuses), so the
// payout service withholds their credits. Serial: each test continues the operator's day.

interface CreditJson {
  id: string;
  depositId: string;
  merchantId: string;
  processId: string;
  amount: number;
  currency: string;
  reason: string;
  status: string;
  resolvedBy: string;
  resolution: string;
  createdAt: string;
  resolvedAt?: string;
}

interface ReconcileJson {
  balanced: boolean;
  discrepancies: string[];
  dismissed: string[];
  merchants: Array<{ merchantId: string; available: number; balanced: boolean }>;
}

let running: RunningServices | undefined;
let dataDir: string | undefined;
let url: string;
let merchantId: string;
/** The two withheld deposits, oldest first. */
const depositIds: string[] = [];

const run = (args: readonly string[], env: Record<string, string> = {}) => cli([...args, "--grpc-url", url], env);
const listJson = async (args: readonly string[] = []) => {
  const r = await run(["withheld-credit", "list", "--merchant", merchantId, ...args, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return singleJson(r.stdout) as { credits: CreditJson[]; nextCursor: string };
};

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-withheld-credit-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "fatal", SHUTDOWN_GRACE: "1s", PAYOUT_WORKER: "0" },
    receivingAccounts: true,
  });
  url = running.server.url;
  merchantId = (await createServiceClient(MerchantService, url).createMerchant({ name: "Went Live Shop", sandbox: true })).merchant!.id;

  const deposits = createServiceClient(DepositService, url);
  const created = [];
  for (const [i, amount] of [25_000n, 4_000n].entries()) {
    created.push((await deposits.createDeposit({ merchantId, processId: `order-${i + 1}`, amount, customer: { id: `cust-${i}`, name: "Ayşe Yılmaz", username: `ayse${i}` } })).deposit!);
  }
  await running.contexts.get("merchant")!.db("merchants").where({ id: merchantId }).update({ sandbox: false });
  for (const [i, d] of created.entries()) {
    const res = await deposits.reportTransfer({ iban: d.assignedAccount!.iban, amount: d.amount, senderName: "Ayşe Yılmaz", reference: d.reference, bankTransactionId: `BTX-WITHHELD-${i}` });
    if (res.deposit?.status !== DepositStatus.COMPLETED) throw new Error(`deposit ${d.id} was not completed by its transfer`);
    depositIds.push(d.id);
  }
  // The payout service hears of the completions from the deposit service's events.
  for (let i = 0; i < 200 && (await listJson()).credits.length < 2; i++) await sleep(25);
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test.serial("list: the open withheld credits, newest first, a page at a time with the cursor that continues, or --all; --json", async (t) => {
  const all = await listJson();
  t.deepEqual(
    all.credits.map((c) => [c.depositId, c.status, c.amount, c.reason, c.resolvedBy]),
    [
      [depositIds[1], "WITHHELD_CREDIT_STATUS_OPEN", 4_000, "sandbox deposit of a live merchant", ""],
      [depositIds[0], "WITHHELD_CREDIT_STATUS_OPEN", 25_000, "sandbox deposit of a live merchant", ""],
    ],
  );
  t.is(all.nextCursor, "");
  t.like(all.credits[1], { merchantId, processId: "order-1", currency: "TRY" });
  t.regex(all.credits[0]!.id, /^whc_/);

  const page = await run(["withheld-credit", "list", "--merchant", merchantId, "--limit", "1"]);
  t.is(page.code, 0, page.stderr);
  t.regex(page.stdout, /^ID +STATUS +DEPOSIT +MERCHANT +AMOUNT +WITHHELD +DECIDED BY: WHY\n/);
  t.true(page.stdout.includes(depositIds[1]!));
  t.false(page.stdout.includes(depositIds[0]!));
  t.regex(page.stdout, /4000 kuruş \(40\.00 TRY\)/);
  const cursor = /More withheld credits: add --cursor (\S+)/.exec(page.stdout)?.[1];
  t.truthy(cursor, page.stdout);
  const next = await listJson(["--limit", "1", "--cursor", cursor!]);
  t.deepEqual(next.credits.map((c) => c.depositId), [depositIds[0]]);
  t.is(next.nextCursor, "");

  const walked = await listJson(["--limit", "1", "--all"]);
  t.deepEqual(walked.credits.map((c) => c.depositId), [depositIds[1], depositIds[0]]);
  t.is(walked.nextCursor, "");

  const everyone = await run(["withheld-credit", "list", "--status", "OPEN", "--all"]);
  t.is(everyone.code, 0, everyone.stderr);
  t.is(everyone.stdout.split("\n").filter((l) => l.startsWith("whc_")).length, 2);
  const none = await run(["withheld-credit", "list", "--status", "dismissed"]);
  t.is(none.stdout, "No withheld credits like that.\n");
});

test.serial("reconcile reports each withheld deposit as withheld and open, not as a missing credit, and exits 1", async (t) => {
  const r = await run(["reconcile", "--json"]);
  t.is(r.code, 1, r.stdout);
  const res = singleJson(r.stdout) as ReconcileJson;
  t.false(res.balanced);
  t.is(res.discrepancies.length, 2, res.discrepancies.join("\n"));
  for (const id of depositIds) {
    const line = res.discrepancies.find((d) => d.startsWith(`deposit ${id}:`)) ?? "";
    t.regex(line, /but its credit is withheld \(sandbox deposit of a live merchant; withheld credit whc_\S+, open: in no balance until an operator credits or dismisses it\)$/);
  }
  // The balances themselves are right: nothing was credited, and nothing says it was.
  t.true(res.merchants.every((m) => m.balanced));
  t.false(res.merchants.some((m) => m.merchantId === merchantId && m.available !== 0));
  const human = await run(["reconcile"]);
  t.is(human.code, 1);
  t.regex(human.stdout, /Ledger discrepancies:\n {2}- deposit dep_\S+: completed with .* but its credit is withheld/);
});

test.serial("credit and dismiss: usage errors before any call; the decisions with who and why; a second decision refused; reconcile then finds the credit", async (t) => {
  const [older, newer] = [(await listJson()).credits[1]!, (await listJson()).credits[0]!];

  for (const args of [
    ["withheld-credit", "credit", older.id],
    ["withheld-credit", "dismiss", older.id, "--reason", "  "],
    ["withheld-credit", "list", "--status", "pending"],
    ["withheld-credit", "list", "--limit", "101"],
    ["withheld-credit", "credit"],
  ]) {
    const r = await cli(args, { GRPC_URL: "http://127.0.0.1:9" });
    t.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
  }
  t.is((await listJson(["--status", "open"])).credits.length, 2, "nothing changed");

  // Crediting withheld money to a live merchant is live money moved by hand: it waits for a second operator.
  const asked = await run(["withheld-credit", "credit", older.id, "--reason", "the bank statement shows the money"], { PAYMENTS_OPERATOR: "operator-ayse" });
  t.is(asked.code, 1, asked.stdout);
  t.regex(asked.stderr, /^error: APPROVAL_REQUIRED: a second operator must approve this: approval apr_\S+ \(credit withheld sandbox money /);
  const approvalId = /"approvalId":"(apr_[^"]+)"/.exec(asked.stderr)?.[1] ?? "";
  t.truthy(approvalId, asked.stderr);
  t.is((await listJson(["--status", "open"])).credits.length, 2, "nothing is credited before a second operator approves");
  const own = await run(["approval", "approve", approvalId], { PAYMENTS_OPERATOR: "operator-ayse" });
  t.is(own.code, 1);
  t.regex(own.stderr, /^error: MAKER_CANNOT_APPROVE: /);

  const credited = await run(["approval", "approve", approvalId, "--note", "statement checked"], { PAYMENTS_OPERATOR: "operator-zeynep" });
  t.is(credited.code, 0, credited.stderr);
  t.true(credited.stdout.startsWith("Approved and done: credit withheld sandbox money"), credited.stdout);
  const creditedRecord = (await listJson(["--status", "credited"])).credits.find((c) => c.id === older.id);
  t.like(creditedRecord, { id: older.id, status: "WITHHELD_CREDIT_STATUS_CREDITED", depositId: older.depositId, amount: 25_000, resolvedBy: "operator-ayse, approved by operator-zeynep", resolution: "the bank statement shows the money" });
  const human = await run(["withheld-credit", "list", "--status", "credited"]);
  t.regex(human.stdout, new RegExp(`${older.id} +credited +${older.depositId} +${merchantId} +25000 kuruş \\(250\\.00 TRY\\) .* operator-ayse, approved by operator-zeynep: the bank statement shows the money\n`));
  const balance = (await createServiceClient(PayoutService, url).getBalances({ merchantId })).balances.find((b) => b.currency === "TRY");
  t.is(balance?.available, 25_000n);

  const dismissed = await run(["withheld-credit", "dismiss", newer.id, "--reason", "test payment", "--actor", "operator-mehmet", "--json"], { PAYMENTS_OPERATOR: "operator-ayse" });
  t.is(dismissed.code, 0, dismissed.stderr);
  const res = singleJson(dismissed.stdout) as { credit: CreditJson };
  t.like(res.credit, { id: newer.id, status: "WITHHELD_CREDIT_STATUS_DISMISSED", resolvedBy: "operator-mehmet", resolution: "test payment", amount: 4_000 });
  t.truthy(res.credit.resolvedAt);

  for (const [decision, id, status] of [["dismiss", older.id, "credited"], ["credit", newer.id, "dismissed"]] as const) {
    const again = await run(["withheld-credit", decision, id, "--reason", "changed my mind", "--actor", "x"]);
    t.is(again.code, 1);
    t.is(again.stderr, `error: INVALID_TRANSACTION_STATE: withheld credit ${id} is ${status}; only an open one can be decided {"status":"${status}"}\n`);
  }
  const unknown = await run(["withheld-credit", "credit", "whc_nope", "--reason", "r", "--actor", "x"]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /^error: TRANSACTION_NOT_FOUND: no withheld credit whc_nope/);
  t.is((await createServiceClient(PayoutService, url).getBalances({ merchantId })).balances.find((b) => b.currency === "TRY")?.available, 25_000n, "the refused decisions changed nothing");

  // The credited one is an ordinary credit now; the dismissed one is decided: listed, and the books balance.
  const r = await run(["reconcile", "--json"]);
  t.is(r.code, 0, r.stdout);
  const rec = singleJson(r.stdout) as ReconcileJson;
  t.deepEqual(rec.discrepancies, []);
  t.deepEqual(rec.dismissed, [
    `deposit ${newer.depositId}: completed with 40.00 TRY to merchant ${merchantId}, but its credit is withheld (sandbox deposit of a live merchant; withheld credit ${newer.id}, dismissed by operator-mehmet: test payment; in no balance)`,
  ]);
  t.true(rec.merchants.every((m) => m.balanced));
});
