import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, type CheckLedgerResponse } from "@payments/contracts/payout";
import { errorInfo, newId, type RunningServices } from "@payments/kit";
import { createServiceClient, createTestDatabase, manualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import test from "ava";
import { creditDeposit } from "../src/deposit-credits.js";
import { CHECK_LEDGER_MAX_CREDITS } from "../src/routes/check-ledger.js";
import { payoutContext } from "./worker-fixtures.js";

/*
 * CheckLedger on a real database, SQLite and MySQL (MariaDB at 127.0.0.1:3306, a database of
 * its own; SUM is DECIMAL text there): a consistent ledger is balanced; a balance row changed
 * behind the ledger's back is found; each way a deposit credit can disagree with the ledger
 * is a discrepancy naming the deposit. The check sees every merchant, so the tests that
 * tamper run serially and put things back (the last one, which drops the ledger's unique
 * index to post a credit twice, runs on a database nothing uses afterwards).
 */

const backends: Array<{ name: string; setup: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> }> = [
  {
    name: "sqlite",
    setup: async () => {
      const dir = mkdtempSync(join(tmpdir(), "payout-check-ledger-"));
      return { env: { DATA_DIR: dir }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: "mysql",
    setup: async () => {
      const database = await createTestDatabase();
      return { env: { DATABASE_URL: database.url }, cleanup: () => database.drop() };
    },
  },
];

for (const backend of backends) {
  const title = (s: string) => `${backend.name}: ${s}`;
  const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
  let running: RunningServices | undefined;
  let cleanup: () => Promise<void> = async () => {};
  let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
  let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

  test.before(async () => {
    const setup = await backend.setup();
    cleanup = setup.cleanup;
    running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
      clock,
      env: { LOG_LEVEL: "error", MASTER_KEY: "cd".repeat(32), PAYOUT_WORKER: "0", SUPPORTED_CURRENCIES: "TRY,EUR", ...setup.env },
    });
    payouts = createServiceClient(PayoutService, running.server.url);
    merchants = createServiceClient(MerchantService, running.server.url);
  });

  test.after.always(async () => {
    await running?.stop();
    await cleanup();
  });

  const db = () => payoutContext(running!).db;

  async function newMerchant(): Promise<string> {
    return (await merchants.createMerchant({ name: "Ledger Check Shop", sandbox: true })).merchant!.id;
  }

  /** Credits a completed deposit the way the deposit-completed event does; returns the deposit id. */
  async function credit(merchantId: string, amount: number, currency = "TRY"): Promise<string> {
    const id = newId("dep");
    const event = create(DepositStatusChangedSchema, {
      eventId: newId("evt"),
      deposit: { id, merchantId, processId: `order-${id}`, amount: BigInt(amount), requestedAmount: BigInt(amount), currency, status: DepositStatus.COMPLETED, sequence: 2n },
      previousStatus: DepositStatus.PENDING,
      occurredAt: timestampFromMs(clock.now().getTime()),
    });
    await creditDeposit(payoutContext(running!), toBinary(DepositStatusChangedSchema, event));
    return id;
  }

  interface Given {
    depositId: string;
    merchantId: string;
    amount: bigint;
    currency: string;
  }

  const given = (depositId: string, merchantId: string, amount: number, currency = "TRY"): Given => ({ depositId, merchantId, amount: BigInt(amount), currency });

  async function check(credits: Given[]): Promise<CheckLedgerResponse> {
    // The reconcile command's own call can be this big; on a busy machine it outlasts the default 5 s deadline.
    return payouts.checkLedger({ allMerchants: true, credits }, { timeoutMs: 60_000 });
  }

  const row = (res: CheckLedgerResponse, merchantId: string, currency = "TRY") => res.merchants.find((m) => m.merchantId === merchantId && m.currency === currency);

  test.serial(title("a consistent ledger is balanced: every balance row equals its entries, every credit matches"), async (t) => {
    const a = await newMerchant();
    const b = await newMerchant();
    await payouts.adjustBalance({ merchantId: a, amount: 20_000n, reason: "opening funds" });
    const d1 = await credit(a, 50_000);
    const d2 = await credit(a, 9_900, "EUR");
    const d3 = await credit(b, 1_234);
    await payouts.createWithdrawal({ merchantId: a, processId: "payout-1", amount: 30_000n, iban: "TR330006100519786457841326", accountName: "Ali Can", userId: "u", userName: "ali", name: "Ali Can" });

    const res = await check([given(d1, a, 50_000), given(d2, a, 9_900, "EUR"), given(d3, b, 1_234)]);
    t.deepEqual(res.discrepancies, []);
    t.true(res.merchants.every((m) => m.balanced), JSON.stringify(res.merchants, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v)));
    const aTry = row(res, a)!;
    t.deepEqual(
      [aTry.available, aTry.held, aTry.ledgerAvailable, aTry.ledgerHeld, aTry.balanced],
      [40_000n, 30_000n, 40_000n, 30_000n, true],
    );
    t.is(row(res, a, "EUR")!.ledgerAvailable, 9_900n);
    t.is(row(res, b)!.available, 1_234n);
    // Ordered by merchant, then currency.
    const keys = res.merchants.map((m) => `${m.merchantId} ${m.currency}`);
    t.deepEqual(keys, [...keys].sort());
  });

  test.serial(title("a balance row changed behind the ledger's back is found, with both sides"), async (t) => {
    const merchantId = await newMerchant();
    await credit(merchantId, 10_000);
    await db()("balances").where({ merchant_id: merchantId, currency: "TRY" }).update({ available: 10_500, held: 7 });
    try {
      const res = await check([]);
      const m = row(res, merchantId)!;
      t.false(m.balanced);
      t.deepEqual([m.available, m.held, m.ledgerAvailable, m.ledgerHeld], [10_500n, 7n, 10_000n, 0n]);
      t.deepEqual(
        res.merchants.filter((x) => !x.balanced).map((x) => x.merchantId),
        [merchantId],
      );
    } finally {
      await db()("balances").where({ merchant_id: merchantId, currency: "TRY" }).update({ available: 10_000, held: 0 });
    }
    t.true((await check([])).merchants.every((m) => m.balanced));
  });

  test.serial(title("a ledger entry without its balance row is found (the row counts as zero)"), async (t) => {
    const merchantId = await newMerchant();
    await credit(merchantId, 3_000, "EUR");
    await db()("balances").where({ merchant_id: merchantId, currency: "EUR" }).delete();
    try {
      const m = row(await check([]), merchantId, "EUR")!;
      t.false(m.balanced);
      t.deepEqual([m.available, m.held, m.ledgerAvailable, m.ledgerHeld], [0n, 0n, 3_000n, 0n]);
    } finally {
      await db()("balances").insert({ merchant_id: merchantId, currency: "EUR", available: 3_000, held: 0, updated_at: clock.now().getTime() });
    }
  });

  test.serial(title("a credit with another amount, another currency, another merchant, or none in the ledger is a discrepancy naming the deposit"), async (t) => {
    const merchantId = await newMerchant();
    const other = await newMerchant();
    const fine = await credit(merchantId, 5_000);
    const short = await credit(merchantId, 9_000);
    const eur = await credit(merchantId, 2_000, "EUR");
    const elsewhere = await credit(other, 4_000);
    const missing = newId("dep");

    const res = await check([given(fine, merchantId, 5_000), given(short, merchantId, 10_000), given(eur, merchantId, 2_000, "TRY"), given(elsewhere, merchantId, 4_000), given(missing, merchantId, 7_500)]);
    t.is(res.discrepancies.length, 4, res.discrepancies.join("\n"));
    const about = (id: string) => res.discrepancies.filter((d) => d.includes(id));
    t.deepEqual(about(fine), []);
    t.is(about(short).length, 1);
    t.regex(about(short)[0]!, /credited 90.00 TRY, completed with 100.00 TRY/);
    t.regex(about(eur)[0]!, /credited 20.00 EUR, completed with 20.00 TRY/);
    t.regex(about(elsewhere)[0]!, new RegExp(`credited to merchant ${other}, not ${merchantId}`));
    t.regex(about(missing)[0]!, /completed with 75.00 TRY to merchant .*, but the ledger has no credit for it/);
    // The credits' disagreements are not the balances': every row still equals its entries.
    t.true(res.merchants.every((m) => m.balanced));
  });

  test.serial(title("a deposit listed twice is a discrepancy; a request scoped to a merchant or too long is refused"), async (t) => {
    const merchantId = await newMerchant();
    const d = await credit(merchantId, 1_000);
    const res = await check([given(d, merchantId, 1_000), given(d, merchantId, 1_000)]);
    t.deepEqual(res.discrepancies, [`deposit ${d}: listed 2 times in the credits (a deposit is completed once)`]);

    for (const req of [{ merchantId }, {}, { merchantId, allMerchants: true }]) {
      const err = await t.throwsAsync(payouts.checkLedger({ ...req, credits: [] }));
      t.like(errorInfo(err), { reason: "VALIDATION_ERROR" }, JSON.stringify(req));
    }
    const refused = await t.throwsAsync(payouts.checkLedger({ merchantId }));
    t.regex(refused.message, /all_merchants/);

    const tooMany = Array.from({ length: CHECK_LEDGER_MAX_CREDITS + 1 }, (_, i) => given(`dep_${i}`, merchantId, 1));
    const long = await t.throwsAsync(check(tooMany));
    t.like(errorInfo(long), { reason: "VALIDATION_ERROR", field: "credits" });
    const bad = await t.throwsAsync(check([given(d, merchantId, 0)]));
    t.like(errorInfo(bad), { reason: "VALIDATION_ERROR", field: "credits.amount" });
  });

  test.serial(title("100,000 credits in one call (queried in chunks): each one judged, the missing and the wrong amount found"), async (t) => {
    const merchantId = await newMerchant();
    const real = [await credit(merchantId, 100), await credit(merchantId, 200)];
    const credits = [given(real[0]!, merchantId, 100), given(real[1]!, merchantId, 250)];
    for (let i = credits.length; i < CHECK_LEDGER_MAX_CREDITS; i++) credits.push(given(`dep_bulk_${i}`, merchantId, 1));
    const res = await check(credits);
    t.is(res.discrepancies.length, CHECK_LEDGER_MAX_CREDITS - 1);
    t.regex(res.discrepancies[0]!, new RegExp(`^deposit ${real[1]}.*credited 2.00 TRY, completed with 2.50 TRY`));
    t.false(res.discrepancies.some((d) => d.includes(real[0]!)));
  });

  // Last: drops the ledger's unique (kind, transaction) index, which is what normally makes a
  // second credit impossible, to show the check would still catch one.
  test.serial(title("a deposit credited twice is a discrepancy naming the deposit"), async (t) => {
    const merchantId = await newMerchant();
    const d = await credit(merchantId, 6_000);
    await db().schema.alterTable("ledger_entries", (tb) => tb.dropUnique(["kind", "transaction_id"], "ledger_entries_kind_transaction_unique"));
    await db()("ledger_entries").insert({
      id: newId("led"),
      merchant_id: merchantId,
      currency: "TRY",
      kind: "deposit_credit",
      available_delta: 6_000,
      held_delta: 0,
      transaction_id: d,
      reason: null,
      created_at: clock.now().getTime(),
    });
    const res = await check([given(d, merchantId, 6_000)]);
    t.is(res.discrepancies.length, 1);
    t.regex(res.discrepancies[0]!, new RegExp(`^deposit ${d}: credited 2 times`));
    // And the balance row no longer equals its entries (the second entry moved no balance).
    t.false(row(res, merchantId)!.balanced);
  });
}
