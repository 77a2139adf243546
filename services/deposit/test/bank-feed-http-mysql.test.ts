import test from "ava";
import { DepositService, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, createTestDatabase } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { FEED_SIGNATURE_HEADER, FEED_TIMESTAMP_HEADER, signFeedBody } from "../src/bank-feed/index.js";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";

// The JSON push feed on MySQL: a body is applied in one transaction, whole or not at all,
// and a repeated body is all duplicates (bank-feed-http.test.ts covers the rest on SQLite).
const SECRET = "m".repeat(40);
let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let running: RunningServices | undefined;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchantId: string;
let ctx: DepositContext;

test.before(async () => {
  database = await createTestDatabase();
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    env: { DATABASE_URL: database.url, LOG_LEVEL: "silent", MASTER_KEY: "cd".repeat(32), BANK_FEEDS: `bank:${SECRET}` },
    receivingAccounts: true,
  });
  deposits = createServiceClient(DepositService, running.server.url);
  const { merchant } = await createServiceClient(MerchantService, running.server.url).createMerchant({ name: "Feed Shop", sandbox: true });
  merchantId = merchant!.id;
  ctx = running.contexts.get("deposit") as DepositContext;
});

test.after.always(async () => {
  await running?.stop();
  await database?.drop();
});

async function push(transfers: unknown[]) {
  const raw = JSON.stringify({ transfers });
  const timestamp = Math.floor(Date.now() / 1000);
  const res = await fetch(`${running!.server.url}/internal/bank-feed/bank`, {
    method: "POST",
    headers: { "content-type": "application/json", [FEED_TIMESTAMP_HEADER]: String(timestamp), [FEED_SIGNATURE_HEADER]: signFeedBody({ secret: SECRET, timestamp, rawBody: raw }) },
    body: raw,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function newDeposit(processId: string): Promise<Deposit> {
  const { deposit } = await deposits.createDeposit({ merchantId, processId, amount: 20_000n, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

const paying = (deposit: Deposit, txId: string, amount: unknown = 20_000) => ({
  receivingIban: deposit.assignedAccount!.iban,
  amount,
  currency: "TRY",
  valueDate: "2026-11-23",
  senderName: "Ayşe Yılmaz",
  description: `ODEME ${deposit.reference}`,
  bankTransactionId: txId,
});
const statusOf = async (id: string) => (await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })).deposit!.status;

test.serial("a batch with one bad record records nothing; fixed, it completes both deposits; sent again it is all duplicates", async (t) => {
  const [a, b] = [await newDeposit("mysql-feed-1"), await newDeposit("mysql-feed-2")];
  const refused = await push([paying(a, "MYSQL-FEED-1"), paying(b, "MYSQL-FEED-2", 1.5)]);
  t.is(refused.status, 400);
  t.is(refused.body.code, "VALIDATION_ERROR");
  t.is((await ctx.db("incoming_transfers").whereIn("bank_transaction_id", ["MYSQL-FEED-1", "MYSQL-FEED-2"])).length, 0);
  t.is(await statusOf(a.id), DepositStatus.PENDING);

  const body = [paying(a, "MYSQL-FEED-1"), paying(b, "MYSQL-FEED-2")];
  const applied = await push(body);
  t.is(applied.status, 200, JSON.stringify(applied.body));
  t.deepEqual(applied.body, { imported: 2, matched: 2, unmatched: 0, review: 0, returned: 0, duplicates: 0 });
  t.is(await statusOf(a.id), DepositStatus.COMPLETED);
  t.is(await statusOf(b.id), DepositStatus.COMPLETED);

  const again = await push(body);
  t.deepEqual(again.body, { imported: 0, matched: 0, unmatched: 0, review: 0, returned: 0, duplicates: 2 });
  const { accounts } = await deposits.getReconciliation({});
  t.deepEqual(accounts.filter((x) => x.difference !== 0n || x.discrepancies.length > 0), []);
});
