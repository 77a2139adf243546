import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, type GetStatementResponse } from "@payments/contracts/payout";
import { encodeCursor, errorInfo, newId, type RunningServices } from "@payments/kit";
import { createServiceClient, manualClock, turkishIban } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { TestFn } from "ava";
import { creditDeposit } from "../src/deposit-credits.js";
import { decodeStatementCursor, encodeStatementCursor } from "../src/ledger.js";
import { moveWithdrawal } from "../src/withdrawal-moves.js";
import { payoutContext } from "./worker-fixtures.js";

/*
 * GetStatement on a real database (SQLite and MySQL run the same suite): the opening
 * balance, the lines in posting order with their running balance and ids, the closing
 * balance, the range's edges, and that nothing of another merchant or currency shows; a
 * day of more than 10,000 entries walked page by page, whole and exact; cursors that are
 * not this statement's refused.
 */

const DAY = 86_400_000;
const DAY1 = Date.parse("2026-11-22T00:00:00.000Z");

export function statementSuite(test: TestFn, env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>): void {
  const clock = manualClock(new Date(DAY1 + 10 * 3_600_000));
  let running: RunningServices | undefined;
  let cleanup: () => Promise<void> = async () => {};
  let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
  let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

  test.before(async () => {
    const setup = await env();
    cleanup = setup.cleanup;
    running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
      clock,
      env: { LOG_LEVEL: "error", MASTER_KEY: "ef".repeat(32), PAYOUT_WORKER: "0", SUPPORTED_CURRENCIES: "TRY,EUR", ...setup.env },
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
    await creditDeposit(payoutContext(running!), toBinary(DepositStatusChangedSchema, event));
    return id;
  }

  async function withdraw(merchantId: string, amount: number, processId: string): Promise<string> {
    const res = await payouts.createWithdrawal({ merchantId, processId, amount: BigInt(amount), iban: iban(), accountName: "Ali Can", userId: "u", userName: "ali", name: "Ali Can" });
    return res.withdrawal!.id;
  }

  async function move(withdrawalId: string, moveName: "start" | "complete" | "cancel"): Promise<void> {
    await payoutContext(running!).db.transaction((trx) => moveWithdrawal(trx, clock, { withdrawalId, move: moveName }));
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

    // Page by page, one line each: the same lines, opening and closing on every page.
    const paged = await walk({ merchantId, currency: "TRY", fromMs: BigInt(DAY1), toMs: BigInt(DAY1 + 2 * DAY), limit: 1 });
    t.is(paged.pages.length, 6);
    t.deepEqual(paged.lines, both.lines);
    t.true(paged.pages.every((p) => total(p.opening) === 0 && total(p.closing) === 120_000));
  });

  type StatementRequest = Parameters<typeof payouts.getStatement>[0];

  /** Every page of a statement from req.cursor (else the first), following next_cursor to the end. */
  async function walk(req: StatementRequest): Promise<{ pages: GetStatementResponse[]; lines: GetStatementResponse["lines"] }> {
    const pages: GetStatementResponse[] = [];
    let cursor = req.cursor ?? "";
    do {
      const page = await payouts.getStatement({ ...req, cursor });
      pages.push(page);
      cursor = page.nextCursor;
      if (pages.length > 1_000) throw new Error("the statement never ends");
    } while (cursor !== "");
    return { pages, lines: pages.flatMap((p) => p.lines) };
  }

  interface EntrySpec {
    merchantId: string;
    currency?: string;
    kind: "deposit_credit" | "withdrawal_hold" | "withdrawal_settle" | "adjustment";
    available: number;
    held: number;
    at: number;
  }

  /** Ledger rows written straight to the table in this order (so seq follows it), many per statement. */
  async function insertEntries(entries: readonly EntrySpec[]): Promise<string[]> {
    const db = payoutContext(running!).db;
    const rows = entries.map((e) => ({
      id: newId("led"),
      merchant_id: e.merchantId,
      currency: e.currency ?? "TRY",
      kind: e.kind,
      available_delta: e.available,
      held_delta: e.held,
      transaction_id: newId(e.kind === "adjustment" ? "adj" : e.kind === "deposit_credit" ? "dep" : "wdr"),
      reason: null,
      process_id: e.kind === "deposit_credit" ? `bulk-${e.at}` : null,
      created_at: e.at,
    }));
    // 80 rows of 10 values stays under SQLite's oldest bound on variables per statement.
    await db.transaction((trx) => db.batchInsert("ledger_entries", rows, 80).transacting(trx));
    return rows.map((r) => r.id);
  }

  test.serial("a day of more than 10,000 entries: every line once, in posting order, each running balance right, opening + lines = closing on every page", async (t) => {
    const merchantId = await newMerchant();
    const other = await newMerchant();
    const day = DAY1 + 20 * DAY;
    const LINES = 10_500;
    const entries: EntrySpec[] = [];
    // Before the day: the opening.
    for (let i = 0; i < 30; i++) entries.push({ merchantId, kind: "deposit_credit", available: 1_000 + i, held: 0, at: day - DAY + i * 1_000 });
    const mine: Array<{ index: number; available: number; held: number }> = [];
    for (let i = 0; i < LINES; i++) {
      // A deposit, then a hold of part of it, then its settlement: three kinds, both parts moving.
      const step = i % 3;
      const spec: EntrySpec =
        step === 0
          ? { merchantId, kind: "deposit_credit", available: 5_000 + (i % 97), held: 0, at: 0 }
          : step === 1
            ? { merchantId, kind: "withdrawal_hold", available: -2_000, held: 2_000, at: 0 }
            : { merchantId, kind: "withdrawal_settle", available: 0, held: -2_000, at: 0 };
      // Spread over the day; several share a millisecond, and every 50th is a millisecond
      // older than the one posted before it (created_at is taken before the balance lock).
      spec.at = day + Math.floor((i * (DAY - 10)) / LINES) - (i % 50 === 49 ? 1 : 0);
      mine.push({ index: entries.length, available: spec.available, held: spec.held });
      entries.push(spec);
      // Another merchant's and another currency's entries in between: never in this statement.
      if (i % 7 === 0) entries.push({ merchantId: other, kind: "deposit_credit", available: 3_333, held: 0, at: spec.at });
      if (i % 11 === 0) entries.push({ merchantId, currency: "EUR", kind: "deposit_credit", available: 4_444, held: 0, at: spec.at });
    }
    // After the day: not in it.
    for (let i = 0; i < 20; i++) entries.push({ merchantId, kind: "adjustment", available: 7, held: 0, at: day + DAY + i });
    const ids = await insertEntries(entries);

    const opening = entries.slice(0, 30).reduce((sum, e) => sum + e.available, 0);
    const expectedIds = mine.map((m) => ids[m.index]);
    let balance = opening;
    const expectedBalances = mine.map((m) => (balance += m.available + m.held));
    const request = { merchantId, currency: "TRY", fromMs: BigInt(day), toMs: BigInt(day + DAY) };

    for (const limit of [0, 4_000, 10_000]) {
      const { pages, lines } = await walk({ ...request, limit });
      const perPage = limit === 0 ? 1_000 : limit;
      t.is(pages.length, Math.ceil(LINES / perPage), `limit ${limit}`);
      t.true(
        pages.every((p, i) => p.lines.length === (i < pages.length - 1 ? perPage : LINES - perPage * (pages.length - 1))),
        `limit ${limit}: full pages, then the rest`,
      );
      t.is(lines.length, LINES);
      t.deepEqual(
        lines.map((l) => l.entryId),
        expectedIds,
        `limit ${limit}: every line once, in posting order`,
      );
      t.deepEqual(
        lines.map((l) => Number(l.balanceAfter)),
        expectedBalances,
        `limit ${limit}: the running balance`,
      );
      for (const page of pages) {
        t.is(total(page.opening), opening);
        t.is(total(page.closing), expectedBalances.at(-1)!);
      }
      const check = arithmetic({ ...pages[0]!, lines });
      t.true(check.ok, check.why);
      t.deepEqual(new Set(lines.map((l) => l.kind)), new Set(["deposit_credit", "withdrawal_hold", "withdrawal_settle"]));
    }
  });

  test.serial("a statement read while entries are posted stays the one its first page saw", async (t) => {
    const merchantId = await newMerchant();
    const day = DAY1 + 40 * DAY;
    await insertEntries(Array.from({ length: 25 }, (_, i) => ({ merchantId, kind: "deposit_credit" as const, available: 100, held: 0, at: day + i })));
    const request = { merchantId, currency: "TRY", fromMs: BigInt(day), toMs: BigInt(day + DAY), limit: 10 };
    const first = await payouts.getStatement(request);
    t.is(total(first.closing), 2_500);
    // Posted between the pages, inside the range.
    at(day + 3_600_000);
    await payouts.adjustBalance({ merchantId, amount: 999n, reason: "while the statement is read" });
    const rest: GetStatementResponse[] = [];
    let cursor = first.nextCursor;
    while (cursor !== "") {
      const page = await payouts.getStatement({ ...request, cursor });
      rest.push(page);
      cursor = page.nextCursor;
    }
    const lines = [...first.lines, ...rest.flatMap((p) => p.lines)];
    t.is(lines.length, 25);
    t.false(lines.some((l) => l.kind === "adjustment"));
    t.true(rest.every((p) => total(p.closing) === 2_500));
    t.true(arithmetic({ ...first, lines }).ok);
    // A new statement has it.
    const fresh = await walk(request);
    t.is(fresh.lines.length, 26);
    t.is(total(fresh.pages[0]!.closing), 3_499);
  });

  test.serial("a cursor that is not one this statement issued is VALIDATION_ERROR on cursor", async (t) => {
    const merchantId = await newMerchant();
    const other = await newMerchant();
    const day = DAY1 + 60 * DAY;
    for (const m of [merchantId, other]) await insertEntries(Array.from({ length: 5 }, (_, i) => ({ merchantId: m, kind: "deposit_credit" as const, available: 100, held: 0, at: day + i })));
    const request = { merchantId, currency: "TRY", fromMs: BigInt(day), toMs: BigInt(day + DAY), limit: 2 };
    const first = await payouts.getStatement(request);
    t.not(first.nextCursor, "");
    const reason = async (req: StatementRequest) => {
      try {
        await walk(req);
      } catch (err) {
        const info = errorInfo(err);
        return `${info.reason} ${info.field}`;
      }
      return "ok";
    };
    t.is(await reason({ ...request, cursor: first.nextCursor }), "ok");
    t.is(await reason({ ...request, cursor: "not-a-cursor" }), "VALIDATION_ERROR cursor");
    t.is(await reason({ ...request, cursor: encodeCursor({ createdAt: day, id: "wdr_1" }) }), "VALIDATION_ERROR cursor", "another listing's cursor");
    t.is(await reason({ ...request, merchantId: other, cursor: first.nextCursor }), "VALIDATION_ERROR cursor", "another merchant");
    t.is(await reason({ ...request, toMs: BigInt(day + 2 * DAY), cursor: first.nextCursor }), "VALIDATION_ERROR cursor", "another range");
    t.is(await reason({ ...request, currency: "EUR", cursor: first.nextCursor }), "VALIDATION_ERROR cursor", "another currency");
    // A running balance made up in a cursor never reaches a last page.
    const position = decodeStatementCursor(first.nextCursor)!;
    const forged = encodeStatementCursor({ ...position, running: { available: position.running.available + 1, held: position.running.held } });
    t.is(await reason({ ...request, cursor: forged }), "VALIDATION_ERROR cursor");
    t.is(await reason({ ...request, limit: 10_001 }), "VALIDATION_ERROR limit");
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
