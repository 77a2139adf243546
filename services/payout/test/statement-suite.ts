import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, type GetStatementResponse } from "@payments/contracts/payout";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { depositModule } from "@payments/deposit-service";
import { createServiceClient, errorInfo, newId, startServices, type RunningServices } from "@payments/kit";
import { manualClock } from "@payments/kit/testing";
import { merchantModule } from "@payments/merchant-service";
import type { TestFn } from "ava";
import { creditDeposit } from "../src/deposit-credits.js";
import { createPayoutModule } from "../src/index.js";
import { statement } from "../src/ledger.js";
import { moveWithdrawal } from "../src/withdrawal-moves.js";
import { payoutContext, turkishIban } from "./worker-fixtures.js";

/*
 * GetStatement on a real database (SQLite and MySQL run the same suite): the opening
 * balance, the lines in posting order with their running balance and ids, the closing
 * balance, the range's edges, and that nothing of another merchant or currency shows.
 */

const DAY = 86_400_000;
const DAY1 = Date.parse("2026-11-22T00:00:00.000Z");

export function statementSuite(test: TestFn, env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>): void {
  const clock = manualClock(new Date(DAY1 + 10 * 3_600_000));
  let running: RunningServices;
  let cleanup: () => Promise<void> = async () => {};
  let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
  let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

  test.before(async () => {
    const setup = await env();
    cleanup = setup.cleanup;
    running = await startServices([merchantModule, bankCatalogModule, depositModule, createPayoutModule()], {
      mode: "all-in-one",
      clock,
      env: { GRPC_PORT: "0", LOG_LEVEL: "error", MASTER_KEY: "ef".repeat(32), PAYOUT_WORKER: "0", SUPPORTED_CURRENCIES: "TRY,EUR", ...setup.env },
    });
    payouts = createServiceClient(PayoutService, running.server.url);
    merchants = createServiceClient(MerchantService, running.server.url);
  });

  test.after.always(async () => {
    await running?.stop();
    await cleanup();
  });

  let ibans = 0;
  const iban = () => turkishIban(`00010000000000${String(++ibans).padStart(8, "0")}`);
  const at = (ms: number) => clock.set(new Date(ms));

  async function newMerchant(): Promise<string> {
    return (await merchants.createMerchant({ name: "Statement Shop", sandbox: true })).merchant!.id;
  }

  async function credit(merchantId: string, amount: number, processId: string, currency = "TRY"): Promise<string> {
    const id = newId("dep");
    const event = create(DepositStatusChangedSchema, {
      eventId: newId("evt"),
      deposit: { id, merchantId, processId, amount: BigInt(amount), requestedAmount: BigInt(amount), currency, status: DepositStatus.COMPLETED, sequence: 2n },
      previousStatus: DepositStatus.PENDING,
      occurredAt: timestampFromMs(clock.now().getTime()),
    });
    await creditDeposit(payoutContext(running), toBinary(DepositStatusChangedSchema, event));
    return id;
  }

  async function withdraw(merchantId: string, amount: number, processId: string): Promise<string> {
    const res = await payouts.createWithdrawal({ merchantId, processId, amount: BigInt(amount), iban: iban(), accountName: "Ali Can", userId: "u", userName: "ali", name: "Ali Can" });
    return res.withdrawal!.id;
  }

  async function move(withdrawalId: string, moveName: "start" | "complete" | "cancel"): Promise<void> {
    await payoutContext(running).db.transaction((trx) => moveWithdrawal(trx, clock, { withdrawalId, move: moveName }));
  }

  const total = (b: GetStatementResponse["opening"]) => Number(b!.available + b!.held);

  /** Opening + every line = closing, and each line's balance is the running sum. */
  function arithmetic(s: GetStatementResponse): { ok: boolean; why: string } {
    let running = total(s.opening);
    for (const line of s.lines) {
      running += Number(line.availableDelta + line.heldDelta);
      if (Number(line.balanceAfter) !== running) return { ok: false, why: `line ${line.entryId}: ${line.balanceAfter} ≠ ${running}` };
    }
    return { ok: running === total(s.closing), why: `closing ${total(s.closing)} ≠ ${running}` };
  }

  test.serial("a statement: opening, every entry in posting order with ids and running balance, closing; another merchant's and another currency's never", async (t) => {
    const merchantId = await newMerchant();
    const other = await newMerchant();

    // Day 1: funding, a deposit, a withdrawal held then paid out, another held then cancelled.
    at(DAY1 + 9 * 3_600_000);
    await payouts.adjustBalance({ merchantId, amount: 100_000n, reason: "opening funds" });
    await payouts.adjustBalance({ merchantId: other, amount: 777_000n, reason: "someone else" });
    await credit(other, 5_000, "other-order");
    at(DAY1 + 10 * 3_600_000);
    const depositId = await credit(merchantId, 50_000, "order-1");
    await credit(merchantId, 9_900, "eur-order", "EUR");
    const paid = await withdraw(merchantId, 30_000, "payout-1");
    // Day 2, at its first millisecond: belongs to day 2.
    at(DAY1 + DAY);
    await move(paid, "start");
    await move(paid, "complete");
    const cancelled = await withdraw(merchantId, 10_000, "payout-2");
    at(DAY1 + DAY + 3_600_000);
    await move(cancelled, "cancel");
    // Day 3: outside a two-day statement.
    at(DAY1 + 2 * DAY);
    await credit(merchantId, 1_000, "order-late");

    const both = await payouts.getStatement({ merchantId, currency: "TRY", fromMs: BigInt(DAY1), toMs: BigInt(DAY1 + 2 * DAY) });
    t.is(both.currency, "TRY");
    t.deepEqual({ available: Number(both.opening!.available), held: Number(both.opening!.held) }, { available: 0, held: 0 });
    t.deepEqual(
      both.lines.map((l) => [l.kind, Number(l.availableDelta), Number(l.heldDelta), Number(l.balanceAfter), l.processId]),
      [
        ["adjustment", 100_000, 0, 100_000, ""],
        ["deposit_credit", 50_000, 0, 150_000, "order-1"],
        ["withdrawal_hold", -30_000, 30_000, 150_000, "payout-1"],
        ["withdrawal_settle", 0, -30_000, 120_000, "payout-1"],
        ["withdrawal_hold", -10_000, 10_000, 120_000, "payout-2"],
        ["withdrawal_release", 10_000, -10_000, 120_000, "payout-2"],
      ],
    );
    t.deepEqual(both.lines.map((l) => l.transactionId).slice(1, 4), [depositId, paid, paid]);
    t.true(both.lines[0]!.transactionId.startsWith("adj"));
    t.deepEqual({ available: Number(both.closing!.available), held: Number(both.closing!.held) }, { available: 120_000, held: 0 });
    const check = arithmetic(both);
    t.true(check.ok, check.why);

    // Day 2 alone: day 1 is the opening; the entry at day 2's first millisecond is in.
    const day2 = await payouts.getStatement({ merchantId, currency: "TRY", fromMs: BigInt(DAY1 + DAY), toMs: BigInt(DAY1 + 2 * DAY) });
    t.is(total(day2.opening), 150_000);
    t.deepEqual({ available: Number(day2.opening!.available), held: Number(day2.opening!.held) }, { available: 120_000, held: 30_000 });
    t.deepEqual(day2.lines.map((l) => l.kind), ["withdrawal_settle", "withdrawal_hold", "withdrawal_release"]);
    t.is(total(day2.closing), 120_000);
    t.true(arithmetic(day2).ok);

    // Up to now: the closing balance is the balance row itself.
    const all = await payouts.getStatement({ merchantId, currency: "", fromMs: BigInt(DAY1 - 300 * DAY), toMs: BigInt(DAY1 + 3 * DAY) });
    t.is(all.currency, "TRY", "empty currency: TRY");
    const { balances } = await payouts.getBalances({ merchantId });
    const tryBalance = balances.find((b) => b.currency === "TRY")!;
    t.deepEqual([all.closing!.available, all.closing!.held], [tryBalance.available, tryBalance.held]);
    t.true(arithmetic(all).ok);

    const eur = await payouts.getStatement({ merchantId, currency: "eur", fromMs: BigInt(DAY1), toMs: BigInt(DAY1 + DAY) });
    t.deepEqual(eur.lines.map((l) => [l.kind, Number(l.availableDelta), l.processId]), [["deposit_credit", 9_900, "eur-order"]]);

    const theirs = await payouts.getStatement({ merchantId: other, currency: "TRY", fromMs: BigInt(DAY1), toMs: BigInt(DAY1 + 3 * DAY) });
    t.deepEqual(theirs.lines.map((l) => Number(l.availableDelta)), [777_000, 5_000]);
    t.false(theirs.lines.some((l) => [depositId, paid, cancelled].includes(l.transactionId)));

    // An empty range: opening = closing, no lines.
    const quiet = await payouts.getStatement({ merchantId, currency: "TRY", fromMs: BigInt(DAY1 + 5 * DAY), toMs: BigInt(DAY1 + 6 * DAY) });
    t.deepEqual([quiet.lines.length, total(quiet.opening), total(quiet.closing)], [0, 121_000, 121_000]);

    // The line cap: more entries than allowed is no statement at all.
    const ctx = payoutContext(running);
    t.is(await statement(ctx.db, { merchantId, currency: "TRY", fromMs: DAY1, toMs: DAY1 + 2 * DAY, maxLines: 5 }), undefined);
    t.is((await statement(ctx.db, { merchantId, currency: "TRY", fromMs: DAY1, toMs: DAY1 + 2 * DAY, maxLines: 6 }))?.lines.length, 6);
  });

  test.serial("bad requests are VALIDATION_ERROR naming the field", async (t) => {
    const merchantId = await newMerchant();
    const reason = async (req: Parameters<typeof payouts.getStatement>[0]) => {
      try {
        await payouts.getStatement(req);
      } catch (err) {
        const info = errorInfo(err);
        return `${info.reason} ${info.field}`;
      }
      return "ok";
    };
    const from = BigInt(DAY1);
    t.is(await reason({ merchantId, currency: "TRY", fromMs: from, toMs: from }), "VALIDATION_ERROR to_ms");
    t.is(await reason({ merchantId, currency: "TRY", fromMs: from, toMs: from + BigInt(367 * DAY) }), "VALIDATION_ERROR to_ms");
    t.is(await reason({ merchantId, currency: "TRY", fromMs: from, toMs: from + BigInt(366 * DAY) }), "ok");
    t.is(await reason({ merchantId, currency: "USD", fromMs: from, toMs: from + BigInt(DAY) }), "VALIDATION_ERROR currency");
    t.is(await reason({ merchantId: "", currency: "TRY", fromMs: from, toMs: from + BigInt(DAY) }), "VALIDATION_ERROR merchant_id");
    t.is(await reason({ merchantId, currency: "TRY", fromMs: -1n, toMs: from }), "VALIDATION_ERROR from_ms");
  });
}
