import test from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, TransferStatus, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { deriveDatabaseUrl, errorInfo, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";
import { importStatement } from "../src/statement-import.js";

// Issue 18: bank reports into one busy receiving account, on MariaDB, from two deposit replicas
// at once, racing each other, their own duplicates and a statement import of the same lines.
// Before, every report locked all of the account's pending deposits (SELECT … FOR UPDATE):
// under this load some answered INTERNAL (a deadlock) and the rest queued. Now none may fail,
// every deposit is completed exactly once by exactly one transfer, and nothing is recorded twice.

const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let running: RunningServices | undefined;
let replica: RunningServices | undefined;
let clients: Array<ReturnType<typeof createServiceClient<typeof DepositService>>>;
/** The bank integration's calls, as production's reports come: no person behind them, so no audit row to chain. */
let reporters: Array<ReturnType<typeof createServiceClient<typeof DepositService>>>;
let merchantId: string;
/** A bank with exactly one active sandbox account: all its deposits land on that account. */
let bankId: string;
let iban: string;

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "error", MASTER_KEY: "cd".repeat(32), DATABASE_POOL_MAX: "20", ...nats, ...TEST_OPERATOR_ENV };
  running = await startInProcess(["merchant", "bank-catalog", depositModule], { env: { ...common, DATABASE_URL: database.url } });
  replica = await startServices([depositModule], {
    mode: "split",
    env: { ...TEST_OPERATOR_ENV, ...common, DATABASE_URL: deriveDatabaseUrl(database.url, "deposit"), MERCHANT_SERVICE_URL: running.server.url, BANK_CATALOG_SERVICE_URL: running.server.url },
  });
  clients = [createServiceClient(DepositService, running.server.url), createServiceClient(DepositService, replica.server.url)];
  reporters = [running, replica].map((r) => createServiceClient(DepositService, r.server.url, { operator: null, workload: "bank-integration/test-bank" }));
  const catalog = createServiceClient(BankCatalogService, running.server.url);
  await addTestReceivingAccounts(catalog);
  const { accounts } = await catalog.listReceivingAccounts({ sandbox: true });
  const perBank = new Map<string, string[]>();
  for (const a of accounts) if (a.active) perBank.set(a.bankId, [...(perBank.get(a.bankId) ?? []), a.iban]);
  const single = [...perBank].find(([, ibans]) => ibans.length === 1);
  if (!single) throw new Error("no bank with a single sandbox account");
  [bankId, [iban]] = [single[0], single[1] as [string]];
  merchantId = (await createServiceClient(MerchantService, running.server.url).createMerchant({ name: "Busy Shop", sandbox: true })).merchant!.id;
});

test.after.always(async () => {
  await replica?.stop();
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

let orders = 0;
async function pendingDeposits(count: number, amount: (i: number) => bigint): Promise<Deposit[]> {
  const made: Deposit[] = [];
  // In small groups: the point is the reports' race, not the creations'.
  for (let i = 0; i < count; i += 20) {
    const group = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, (_, k) =>
        clients[0]!.createDeposit({ merchantId, processId: `busy-${++orders}`, amount: amount(i + k), bankId, customer: { id: `c${i + k}`, name: "Ayşe Yılmaz", username: "ayse" } }),
      ),
    );
    made.push(...group.map((g) => g.deposit!));
  }
  for (const d of made) if (d.assignedAccount?.iban !== iban) throw new Error(`deposit ${d.id} is on ${d.assignedAccount?.iban}, not ${iban}`);
  return made;
}

const db = () => (running!.contexts.get("deposit") as DepositContext).db;

async function failures(calls: Array<Promise<unknown>>): Promise<string[]> {
  const settled = await Promise.allSettled(calls);
  return settled.flatMap((r) => (r.status === "rejected" ? [`${errorInfo(r.reason).code} ${errorInfo(r.reason).reason ?? ""} ${errorInfo(r.reason).message}`] : []));
}

test.serial("300 reports at once into one account, from two replicas, each paying its own deposit: none fails, each deposit completed once by its transfer", async (t) => {
  const made = await pendingDeposits(300, (i) => 10_000n + BigInt(i));
  const calls = made.map((d, i) =>
    reporters[i % 2]!.reportTransfer({ iban, amount: d.requestedAmount, senderName: "AYSE YILMAZ", reference: `havale ${d.reference}`, bankTransactionId: `BUSY-${d.id}` }),
  );
  t.deepEqual(await failures(calls), []);
  const rows = await db()("deposits").whereIn("id", made.map((d) => d.id)).select<Array<Record<string, unknown>>>("id", "status", "transfer_id", "sequence", "amount", "requested_amount");
  t.true(rows.every((r) => r.status === "completed" && Number(r.sequence) === 2 && Number(r.amount) === Number(r.requested_amount)), "every deposit completed once, with what it asked");
  t.is(new Set(rows.map((r) => r.transfer_id)).size, 300, "each by a transfer of its own");
  const transfers = await db()("incoming_transfers").where("bank_transaction_id", "like", "BUSY-%").select<Array<{ status: string }>>("status");
  t.is(transfers.length, 300);
  t.true(transfers.every((r) => r.status === "matched"));
});

test.serial("reports racing their own duplicates and a statement import of the same lines: every transfer recorded once, every deposit completed once", async (t) => {
  const made = await pendingDeposits(60, (i) => 20_000n + BigInt(i) * 100n);
  // The bank reference after // is at most 16 characters: RACE- and 10 of the deposit id.
  const line = (d: Deposit) => `:61:2611221122C${Number(d.requestedAmount) / 100},00NTRFNONREF//RACE-${d.id.slice(-10)}\n:86:GELEN EFT AYSE YILMAZ\nODEME ${d.reference}`;
  const total = made.reduce((sum, d) => sum + Number(d.requestedAmount), 0);
  const statement = [":20:RACE1", `:25:${iban}`, ":28C:00001/001", ":60F:C261121TRY0,00", ...made.map(line), `:62F:C261122TRY${total / 100},00`, "-"].join("\n");
  const ctx = running!.contexts.get("deposit") as DepositContext;
  const report = (d: Deposit, i: number) =>
    reporters[i % 2]!.reportTransfer({ iban, amount: d.requestedAmount, senderName: "AYSE YILMAZ", reference: `ODEME ${d.reference}`, bankTransactionId: `RACE-${d.id.slice(-10)}` });
  const calls: Array<Promise<unknown>> = [];
  for (const [i, d] of made.entries()) calls.push(report(d, i), report(d, i + 1));
  calls.push(importStatement(ctx, "mt940", new TextEncoder().encode(statement), "race.sta"));
  calls.push(importStatement(ctx, "mt940", new TextEncoder().encode(statement), "race-again.sta"));
  t.deepEqual(await failures(calls), []);

  const transfers = await db()("incoming_transfers").where("bank_transaction_id", "like", "RACE-%").select<Array<Record<string, unknown>>>("bank_transaction_id", "status", "deposit_id");
  t.is(transfers.length, 60, "each bank transaction once, however many times and ways it was reported");
  t.true(transfers.every((r) => r.status === "matched"));
  const rows = await db()("deposits").whereIn("id", made.map((d) => d.id)).select<Array<Record<string, unknown>>>("status", "sequence");
  t.true(rows.every((r) => r.status === "completed" && Number(r.sequence) === 2));
  const suspense = (await db()("suspense_entries").whereIn("transfer_id", db()("incoming_transfers").where("bank_transaction_id", "like", "RACE-%").select("id")).count({ n: "*" }).first()) as { n: number };
  t.is(Number(suspense.n), 0, "nothing went to suspense");
});

test.serial("two transfers for one deposit at once: exactly one completes it, the other waits in suspense, never a second completion", async (t) => {
  for (let round = 0; round < 10; round++) {
    const [d] = await pendingDeposits(1, () => 77_700n);
    const both = await Promise.all([0, 1].map((k) => reporters[k]!.reportTransfer({ iban, amount: 77_700n, senderName: "AYSE YILMAZ", reference: d!.reference, bankTransactionId: `TWICE-${round}-${k}` })));
    const completed = both.filter((r) => r.deposit?.id === d!.id && r.transfer?.status === TransferStatus.MATCHED);
    t.is(completed.length, 1, `round ${round}: one completion`);
    const other = both.find((r) => r !== completed[0])!;
    t.is(other.transfer?.status, TransferStatus.UNMATCHED, `round ${round}: the other is kept unmatched (the deposit is no longer pending)`);
    const row = (await db()("deposits").where({ id: d!.id }).first()) as { status: string; sequence: number; transfer_id: string };
    t.like(row, { status: "completed", transfer_id: completed[0]!.transfer!.id });
    t.is(Number(row.sequence), 2);
  }
});
