import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestFn } from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus, DepositStatusChangedSchema, TransferStatus, type Deposit } from "@payments/contracts/deposit";
import { LatePaymentRule, MerchantService } from "@payments/contracts/merchant";
import { DEPOSIT_TOPICS } from "@payments/deposit-service";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, eventually, rejectionOf, testOperator } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// Reconciliation end to end, every service in one process, on the embedded storage and on
// MySQL (reconciliation-flow.e2e.test.ts and reconciliation-flow-mysql.e2e.test.ts run it): transfers that wait
// (review, unmatched), the operators' decisions on them, late payments, returns through the
// payout connector, statement import, and the books balancing after each.
export function reconciliationFlowSuite(test: TestFn, storage: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>): void {
const dir = mkdtempSync(join(tmpdir(), "reconciliation-"));
let dropStorage: (() => Promise<void>) | undefined;
let running: RunningServices;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
/** The deposit service as one operator: the services record the assertion's subject as who decided, not a name in the request. */
let depositsAs: (subject: string) => ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;
const SENDER_IBAN = "TR330006100519786457841326";

test.before(async () => {
  const store = await storage();
  dropStorage = store.drop;
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATA_DIR: dir, LOG_LEVEL: "warn", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", SANDBOX_PAYOUT_DELAY: "10ms", ...store.env },
    receivingAccounts: true,
  });
  deposits = createServiceClient(DepositService, running.server.url);
  depositsAs = (subject) => createServiceClient(DepositService, running.server.url, { operator: testOperator("admin", subject) });
  merchants = createServiceClient(MerchantService, running.server.url);
});

test.after.always(async () => {
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (running as typeof running | undefined)?.stop();
  await dropStorage?.();
  rmSync(dir, { recursive: true, force: true });
});

const depositDb = () => running.contexts.get("deposit")!.db;

const failure = rejectionOf;

async function sandboxMerchant(rules: { latePayment?: LatePaymentRule } = {}): Promise<string> {
  const { merchant } = await merchants.createMerchant({ name: "Reconciled Shop", sandbox: true });
  if (rules.latePayment !== undefined) await merchants.setPaymentRules({ merchantId: merchant!.id, latePayment: rules.latePayment });
  return merchant!.id;
}

let n = 0;
async function newDeposit(merchantId: string, amount = 50_000n): Promise<Deposit> {
  const { deposit } = await deposits.createDeposit({ merchantId, processId: `rec-${++n}`, amount, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

let btx = 0;
function report(deposit: Deposit, amount: bigint, description: string, senderIban = "", senderName = "AYSE YILMAZ") {
  return deposits.reportTransfer({ iban: deposit.assignedAccount!.iban, amount, senderName, reference: description, bankTransactionId: `REC-${++btx}`, senderIban });
}

async function assertBalanced(t: { deepEqual(a: unknown, b: unknown, m?: string): void }, what: string) {
  const { accounts } = await deposits.getReconciliation({});
  t.deepEqual(
    accounts.filter((a) => a.difference !== 0n || a.discrepancies.length > 0).map((a) => ({ iban: a.iban, difference: a.difference, discrepancies: a.discrepancies })),
    [],
    `reconciliation balances ${what}`,
  );
}

test.serial("a short payment waits in review in suspense; the operator completes it with the amount received, and the books balance", async (t) => {
  const merchantId = await sandboxMerchant();
  const deposit = await newDeposit(merchantId);
  const { transfer } = await report(deposit, 49_000n, `odeme ${deposit.reference}`);
  t.like(transfer, { status: TransferStatus.REVIEW, reviewDepositId: deposit.id });
  await assertBalanced(t, "with the transfer in suspense");
  const before = (await deposits.getReconciliation({})).accounts.find((a) => a.iban === deposit.assignedAccount!.iban)!;
  t.true(before.suspense >= 49_000n);

  const resolved = await depositsAs("ops-ayse").resolveTransfer({ transferId: transfer!.id, actor: "ops-ayse", reason: "bank fee, accepted", decision: { case: "complete", value: true } });
  t.like(resolved.deposit, { id: deposit.id, status: DepositStatus.COMPLETED, amount: 49_000n, requestedAmount: 50_000n });
  t.like(resolved.transfer, { status: TransferStatus.MATCHED, depositId: deposit.id, resolvedBy: "ops-ayse" });
  const { transfer: shown } = await deposits.getTransfer({ transferId: transfer!.id });
  t.deepEqual(
    shown!.actions.map((a) => [a.action, a.actor, a.reason]),
    [["completed", "ops-ayse", "bank fee, accepted"]],
  );
  // Resolved once: a second decision is refused and changes nothing.
  t.like(await failure(depositsAs("ops-ayse").resolveTransfer({ transferId: transfer!.id, actor: "ops-ayse", reason: "again", decision: { case: "refuse", value: true } })), { reason: "TRANSFER_NOT_OPEN" });
  await assertBalanced(t, "after the decision");
});

test.serial("an unmatched transfer is matched by an operator to a deposit; refusing a reviewed one leaves it unmatched", async (t) => {
  const merchantId = await sandboxMerchant();
  const deposit = await newDeposit(merchantId, 70_000n);
  const { transfer } = await report(deposit, 12_345n, "no reference at all", "", "KEMAL SUNAL");
  t.is(transfer!.status, TransferStatus.UNMATCHED);
  const matched = await depositsAs("ops-mert").resolveTransfer({ transferId: transfer!.id, actor: "ops-mert", reason: "customer sent the receipt", decision: { case: "matchDepositId", value: deposit.id } });
  t.like(matched.deposit, { status: DepositStatus.COMPLETED, amount: 12_345n, matchBy: "operator" });
  await assertBalanced(t, "after the match");

  const other = await newDeposit(merchantId, 80_000n);
  const { transfer: short } = await report(other, 1_000n, other.reference);
  t.is(short!.status, TransferStatus.REVIEW);
  const refused = await depositsAs("ops-mert").resolveTransfer({ transferId: short!.id, actor: "ops-mert", reason: "not this customer", decision: { case: "refuse", value: true } });
  t.is(refused.transfer!.status, TransferStatus.UNMATCHED);
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: other.id } })).deposit!.status, DepositStatus.PENDING);
  const open = await deposits.listUnmatchedTransfers({ includeReview: true, limit: 500 });
  t.true(open.transfers.some((tr) => tr.id === short!.id));
  await assertBalanced(t, "after the refusal");
});

test.serial("a return pays the sender back through the sandbox connector: returning, then returned, never credited", async (t) => {
  const merchantId = await sandboxMerchant();
  const deposit = await newDeposit(merchantId);
  const { transfer } = await report(deposit, 777n, "stray payment", SENDER_IBAN);
  const asked = await depositsAs("ops-ayse").resolveTransfer({ transferId: transfer!.id, actor: "ops-ayse", reason: "no such order", decision: { case: "return", value: { iban: "" } } });
  t.is(asked.transfer!.status, TransferStatus.RETURNING);
  await assertBalanced(t, "while returning");
  await eventually(async () => (await deposits.getTransfer({ transferId: transfer!.id })).transfer!.status === TransferStatus.RETURNED, "the return settled", 15_000);
  const { transfer: done } = await deposits.getTransfer({ transferId: transfer!.id });
  t.deepEqual(
    done!.actions.map((a) => a.action),
    ["return_requested", "returned"],
  );
  const account = (await deposits.getReconciliation({})).accounts.find((a) => a.iban === deposit.assignedAccount!.iban)!;
  t.true(account.returned >= 777n);
  await assertBalanced(t, "after the return");
});

test.serial("a late payment: by default it waits in review; the operator's completion is the one move out of expired, with the next sequence", async (t) => {
  const merchantId = await sandboxMerchant();
  const deposit = await newDeposit(merchantId);
  await deposits.sandboxExpireDeposit({ merchantId, depositId: deposit.id });
  const { transfer } = await report(deposit, 50_000n, deposit.reference);
  t.like(transfer, { status: TransferStatus.REVIEW, late: true, reviewDepositId: deposit.id });
  const done = await depositsAs("ops-ayse").resolveTransfer({ transferId: transfer!.id, actor: "ops-ayse", reason: "customer paid late, accepted", decision: { case: "complete", value: true } });
  t.like(done.deposit, { status: DepositStatus.COMPLETED, latePayment: true, sequence: 3n, amount: 50_000n });
  const events = (await depositDb()("outbox").whereIn("topic", DEPOSIT_TOPICS).orderBy("seq")) as Array<{ topic: string; payload: Uint8Array }>;
  const mine = events.map((e) => fromBinary(DepositStatusChangedSchema, e.payload)).filter((e) => e.deposit?.id === deposit.id);
  t.deepEqual(
    mine.map((e) => [e.previousStatus, e.deposit!.status, e.deposit!.sequence]),
    [
      [DepositStatus.PENDING, DepositStatus.EXPIRED, 2n],
      [DepositStatus.EXPIRED, DepositStatus.COMPLETED, 3n],
    ],
  );
  await assertBalanced(t, "after the late completion");
});

test.serial("late payment rules: complete completes it on arrival; return sends it back when the sender's IBAN is known", async (t) => {
  const completing = await sandboxMerchant({ latePayment: LatePaymentRule.COMPLETE });
  const a = await newDeposit(completing);
  await deposits.sandboxExpireDeposit({ merchantId: completing, depositId: a.id });
  const paid = await report(a, 50_000n, a.reference);
  t.like(paid.deposit, { id: a.id, status: DepositStatus.COMPLETED, latePayment: true });
  t.like(paid.transfer, { status: TransferStatus.MATCHED, late: true });

  const returning = await sandboxMerchant({ latePayment: LatePaymentRule.RETURN });
  const b = await newDeposit(returning);
  await deposits.sandboxExpireDeposit({ merchantId: returning, depositId: b.id });
  const sent = await report(b, 50_000n, b.reference, SENDER_IBAN);
  t.is(sent.deposit, undefined);
  await eventually(async () => (await deposits.getTransfer({ transferId: sent.transfer!.id })).transfer!.status === TransferStatus.RETURNED, "the rule's return settled", 15_000);
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: b.id } })).deposit!.status, DepositStatus.EXPIRED);
  await assertBalanced(t, "after the rules acted");
});

test.serial("sandbox and live never mix: money on a live account cannot pay a sandbox deposit, by either decision, and nothing changes", async (t) => {
  const merchantId = await sandboxMerchant();
  const deposit = await newDeposit(merchantId);
  const { accounts } = await createServiceClient(BankCatalogService, running.server.url).listReceivingAccounts({ sandbox: false });
  const liveIban = accounts[0]!.iban;
  const { transfer } = await deposits.reportTransfer({ iban: liveIban, amount: 50_000n, senderName: "KEMAL SUNAL", reference: "real money", bankTransactionId: `REC-LIVE-${++btx}` });
  t.is(transfer!.status, TransferStatus.UNMATCHED);
  t.like(await failure(depositsAs("ops").resolveTransfer({ transferId: transfer!.id, actor: "ops", reason: "looks like it", decision: { case: "matchDepositId", value: deposit.id } })), { reason: "SANDBOX_MISMATCH" });
  t.like(await failure(deposits.confirmDeposit({ depositId: deposit.id, transferId: transfer!.id })), { reason: "SANDBOX_MISMATCH" });
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit.id } })).deposit!.status, DepositStatus.PENDING);
  t.like((await deposits.getTransfer({ transferId: transfer!.id })).transfer, { status: TransferStatus.UNMATCHED, actions: [] });
  await assertBalanced(t, "after the refusals");
});

function mt940(iban: string, lines: Array<{ amount: string; ref: string; description: string }>): string {
  const body = lines.map((l) => `:61:2611231123C${l.amount}NTRF${l.ref}//${l.ref}\n:86:${l.description}`).join("\n");
  const total = lines.reduce((sum, l) => sum + Number(l.amount.replace(",", ".")), 0);
  const closing = total.toFixed(2).replace(".", ",");
  return `:20:STMT${iban.slice(-6)}\n:25:${iban}\n:28C:00001/001\n:60F:C261122TRY0,00\n${body}\n:62F:C261123TRY${closing}\n-\n`;
}

test.serial("an MT940 statement imports each credit once: importing it again changes nothing", async (t) => {
  const merchantId = await sandboxMerchant();
  const deposit = await newDeposit(merchantId, 125_050n);
  const iban = deposit.assignedAccount!.iban;
  const content = new TextEncoder().encode(
    mt940(iban, [
      { amount: "1250,50", ref: `PAY${n}A`, description: `GELEN FAST AYŞE YILMAZ ÖDEME ${deposit.reference.slice(0, 4)}-${deposit.reference.slice(4)}` },
      { amount: "10,00", ref: `PAY${n}B`, description: "BILINMEYEN GONDEREN" },
    ]),
  );
  const first = await deposits.importStatement({ format: "mt940", content, fileName: "akbank.sta" });
  t.like(first, { imported: 2, matched: 1, unmatched: 1, duplicates: 0 });
  t.like((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit.id } })).deposit, { status: DepositStatus.COMPLETED, amount: 125_050n, matchBy: "reference" });
  const again = await deposits.importStatement({ format: "mt940", content, fileName: "akbank.sta" });
  t.like(again, { imported: 0, matched: 0, unmatched: 0, duplicates: 2 });
  const rows = await depositDb()("incoming_transfers").where({ iban });
  t.is(rows.filter((r: { source: string }) => r.source === "mt940").length, 2);
  t.like(await failure(deposits.importStatement({ format: "mt940", content: new TextEncoder().encode("not a statement"), fileName: "junk.sta" })), { reason: "STATEMENT_INVALID" });
  await assertBalanced(t, "after the import");
});
}
