import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { ConfigError, type RunningServices } from "@payments/kit";
import { createServiceClient, manualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { FEED_SIGNATURE_HEADER, FEED_TIMESTAMP_HEADER, signFeedBody } from "../src/bank-feed/index.js";
import type { DepositContext } from "../src/context.js";
import { loadDepositConfig } from "../src/context.js";
import { depositModule } from "../src/index.js";

// The JSON push feed (src/bank-feed/http.ts): POST /internal/bank-feed/{feedId} on the deposit
// service's port, real HTTP, SQLite. A body is applied whole or not at all.

const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "deposit-feed-http-"));
const SECRET = "s".repeat(40);
const OLD_SECRET = "o".repeat(40);
let running: RunningServices | undefined;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchantId: string;
let ctx: DepositContext;
let ourIban: string;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    clock,
    env: { DATA_DIR: dir, LOG_LEVEL: "silent", MASTER_KEY: "cd".repeat(32), BANK_FEEDS: `acme:${SECRET}, acme:${OLD_SECRET},other:${"x".repeat(32)}` },
    receivingAccounts: true,
  });
  deposits = createServiceClient(DepositService, running.server.url);
  const { merchant } = await createServiceClient(MerchantService, running.server.url).createMerchant({ name: "Feed Shop", sandbox: true });
  merchantId = merchant!.id;
  ctx = running.contexts.get("deposit") as DepositContext;
  ourIban = (await createServiceClient(BankCatalogService, running.server.url).listReceivingAccounts({})).accounts[0]!.iban;
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Transfer {
  receivingIban: string;
  amount: number;
  currency: string;
  valueDate: string;
  senderName: string;
  description: string;
  bankTransactionId: string;
}

async function push(transfers: unknown[], options: { feed?: string; secret?: string; timestamp?: number; signature?: string; raw?: string } = {}) {
  const raw = options.raw ?? JSON.stringify({ transfers });
  const timestamp = options.timestamp ?? Math.floor(clock.now().getTime() / 1000);
  const signature = options.signature ?? signFeedBody({ secret: options.secret ?? SECRET, timestamp, rawBody: raw });
  const res = await fetch(`${running!.server.url}/internal/bank-feed/${options.feed ?? "acme"}`, {
    method: "POST",
    headers: { "content-type": "application/json", [FEED_TIMESTAMP_HEADER]: String(timestamp), [FEED_SIGNATURE_HEADER]: signature },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

async function newDeposit(processId: string): Promise<Deposit> {
  const { deposit } = await deposits.createDeposit({ merchantId, processId, amount: 10_000n, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

function paying(deposit: Deposit, txId: string): Transfer {
  return { receivingIban: deposit.assignedAccount!.iban, amount: 10_000, currency: "TRY", valueDate: "2026-11-22", senderName: "Ayşe Yılmaz", description: `ODEME REF ${deposit.reference}`, bankTransactionId: txId };
}

function stray(txId: string): Transfer {
  return { receivingIban: ourIban, amount: 777, currency: "TRY", valueDate: "2026-11-22", senderName: "Mehmet Öz", description: "NO REFERENCE", bankTransactionId: txId };
}

const statusOf = async (id: string) => (await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })).deposit!.status;
const transferCount = async () => Number((await ctx.db("incoming_transfers").count<Array<{ n: number }>>({ n: "*" }))[0]!.n);

test.serial("a good batch is recorded and answered with counts; the same batch again is all duplicates", async (t) => {
  const [d1, d2] = [await newDeposit("feed-1"), await newDeposit("feed-2")];
  const body = [paying(d1, "FEED-1"), paying(d2, "FEED-2"), stray("FEED-3"), stray("FEED-3")];
  const first = await push(body);
  t.is(first.status, 200, first.text);
  t.deepEqual(first.body, { imported: 3, matched: 2, unmatched: 1, review: 0, returned: 0, duplicates: 1 });
  t.is(await statusOf(d1.id), DepositStatus.COMPLETED);
  t.is(await statusOf(d2.id), DepositStatus.COMPLETED);
  const row = await ctx.db("incoming_transfers").where({ bank_transaction_id: "FEED-1" }).first<{ source: string } | undefined>("source");
  t.is(row?.source, "feed:acme");

  const again = await push(body, { secret: OLD_SECRET });
  t.is(again.status, 200, "the feed's second secret (a rotation) is valid too");
  t.deepEqual(again.body, { imported: 0, matched: 0, unmatched: 0, review: 0, returned: 0, duplicates: 4 });
});

test.serial("a bad or missing signature, a stale timestamp, another feed's secret or an unknown feed is 401 and records nothing", async (t) => {
  const before = await transferCount();
  const body = [stray("SIG-1")];
  const now = Math.floor(clock.now().getTime() / 1000);
  const cases: Array<[string, Parameters<typeof push>[1], string]> = [
    ["bad signature", { signature: "0".repeat(64) }, "INVALID_SIGNATURE"],
    ["missing signature", { signature: "" }, "INVALID_SIGNATURE"],
    ["stale timestamp", { timestamp: now - 301 }, "INVALID_SIGNATURE"],
    ["another feed's secret", { secret: "x".repeat(32) }, "INVALID_SIGNATURE"],
    ["unknown feed", { feed: "nobody" }, "UNKNOWN_FEED"],
  ];
  for (const [label, options, code] of cases) {
    const answer = await push(body, options);
    t.is(answer.status, 401, label);
    t.is(answer.body.code, code, label);
    t.is(typeof answer.body.message, "string", label);
  }
  t.is(await transferCount(), before);
});

test.serial("one bad record among good ones is 400 naming its index and field, and nothing is recorded", async (t) => {
  const deposit = await newDeposit("feed-bad");
  const before = await transferCount();
  const answer = await push([paying(deposit, "BAD-1"), stray("BAD-2"), { ...stray("BAD-3"), amount: 12.5 }]);
  t.is(answer.status, 400);
  t.is(answer.body.code, "VALIDATION_ERROR");
  t.deepEqual(answer.body.problems, [{ index: 2, field: "transfers[2].amount", message: "must be a positive integer (kuruş)" }]);
  t.is(await transferCount(), before);
  t.is(await statusOf(deposit.id), DepositStatus.PENDING);

  const notJson = await push([], { raw: "{nope" });
  t.is(notJson.status, 400);
  t.is(notJson.body.code, "VALIDATION_ERROR");

  const currency = await push([stray("CUR-1"), { ...stray("CUR-2"), currency: "USD" }]);
  t.is(currency.status, 400);
  t.is(currency.body.code, "UNSUPPORTED_CURRENCY");
  t.like((currency.body.problems as unknown[])[0], { index: 1, field: "transfers[1].currency" });
  t.is(await transferCount(), before);
});

test.serial("a receiving IBAN that is not ours is 400 UNKNOWN_ACCOUNT naming it, and nothing is recorded", async (t) => {
  const deposit = await newDeposit("feed-foreign");
  const before = await transferCount();
  const foreign = "TR330006100519786457841326";
  const answer = await push([paying(deposit, "FOR-1"), { ...stray("FOR-2"), receivingIban: foreign }]);
  t.is(answer.status, 400);
  t.is(answer.body.code, "UNKNOWN_ACCOUNT");
  t.true(String(answer.body.message).includes(foreign));
  t.like((answer.body.problems as unknown[])[0], { index: 1, field: "transfers[1].receivingIban" });
  t.is(await transferCount(), before);
  t.is(await statusOf(deposit.id), DepositStatus.PENDING);
});

test.serial("a failure while applying rolls back the whole body: 500 INTERNAL, no SQL, nothing recorded", async (t) => {
  const deposit = await newDeposit("feed-fault");
  const before = await transferCount();
  // A trigger makes the second insert fail midway through the transaction.
  await ctx.db.raw("CREATE TRIGGER feed_fault BEFORE INSERT ON incoming_transfers WHEN NEW.bank_transaction_id = 'FAULT-2' BEGIN SELECT RAISE(ABORT, 'boom in SQL'); END");
  t.teardown(() => ctx.db.raw("DROP TRIGGER IF EXISTS feed_fault"));
  const answer = await push([paying(deposit, "FAULT-1"), stray("FAULT-2")]);
  t.is(answer.status, 500);
  t.deepEqual(answer.body, { code: "INTERNAL", message: "internal error" });
  t.notRegex(answer.text, /boom|SQL|INSERT/);
  t.is(await transferCount(), before);
  t.is(await statusOf(deposit.id), DepositStatus.PENDING);
});

test("a body over 1 MB is 413", async (t) => {
  const answer = await push([], { raw: JSON.stringify({ transfers: [], pad: "x".repeat(1024 * 1024) }) });
  t.is(answer.status, 413);
});

test("BANK_FEEDS with bad syntax or a short secret is a config error naming the setting, never the secret", (t) => {
  for (const value of ["acme", "acme:short", `bad id:${"a".repeat(32)}`, `acme:${"a".repeat(32)},:${"b".repeat(32)}`]) {
    const err = t.throws(() => loadDepositConfig({ BANK_FEEDS: value }), { instanceOf: ConfigError }, value);
    t.regex(err.message, /BANK_FEEDS/, value);
    t.false(err.message.includes("a".repeat(32)), value);
  }
  const feeds = loadDepositConfig({ BANK_FEEDS: `a:${"1".repeat(32)},b:${"2".repeat(32)},a:${"3".repeat(32)}` }).BANK_FEEDS;
  t.deepEqual([...feeds.entries()], [["a", ["1".repeat(32), "3".repeat(32)]], ["b", ["2".repeat(32)]]]);
});
