import { Code } from "@connectrpc/connect";
import { createHash } from "node:crypto";
import { isMysql, newId, serviceError, validationError, type Clock } from "@payments/kit";
import type { Knex } from "knex";

/**
 * The ledger: append-only entries, and per merchant and currency a balance row that is
 * their running sum, changed in the same transaction as each entry. The balance update is
 * conditional (`available + Δ >= 0 AND held + Δ >= 0`), so on MySQL concurrent requests
 * serialise on the row and none can take a balance below zero.
 */

export type LedgerKind = "deposit_credit" | "withdrawal_hold" | "withdrawal_release" | "withdrawal_settle" | "adjustment";

export interface LedgerPosting {
  merchantId: string;
  currency: string;
  kind: LedgerKind;
  availableDelta: number;
  heldDelta: number;
  /** The deposit, withdrawal or adjustment this entry belongs to; unique per kind. */
  transactionId: string;
  /** The merchant's process id of a deposit, kept with its credit for statements (withdrawals are joined instead). */
  processId?: string;
  reason?: string;
  /** Who made the money move, in words (LedgerEntry.actor): a credit's deposit completer, an adjustment's operator. */
  actor?: string;
}

export interface LedgerEntryRow {
  seq?: number;
  id: string;
  merchant_id: string;
  currency: string;
  kind: string;
  available_delta: number;
  held_delta: number;
  transaction_id: string;
  reason: string | null;
  /** Deposit credits posted since 20261126020000_ledger_process_id; null otherwise. */
  process_id?: string | null;
  /** Who made the move; null for entries posted before issue 32. */
  actor?: string | null;
  created_at: number;
}

export interface BalanceRow {
  merchant_id: string;
  currency: string;
  available: number;
  held: number;
  updated_at: number;
}

export function insufficientBalance(currency: string): Error {
  return serviceError(Code.FailedPrecondition, "INSUFFICIENT_BALANCE", `the available ${currency} balance is too low for this amount`);
}

/**
 * Posts one entry inside `trx`. Refuses with INSUFFICIENT_BALANCE (the caller's
 * transaction then rolls back, changing nothing) when available or held would go below
 * zero. Returns undefined, changing nothing, when this kind of entry for this transaction
 * already exists (a repeated event).
 */
export async function post(trx: Knex.Transaction, clock: Clock, posting: LedgerPosting): Promise<LedgerEntryRow | undefined> {
  const [entry] = await postMany(trx, clock, [posting]);
  return entry;
}

/**
 * `post` for many entries at once, by the same rules, in one go: one read of which are posted
 * already, the balance rows locked in one statement, one balance update per (merchant,
 * currency) with the entries' summed deltas, one multi-row insert of the entries. All or
 * nothing: INSUFFICIENT_BALANCE when a balance could go below zero, whatever the order of
 * its entries (see `postLocked`). The answer is in the order of `postings`: the new entry, or
 * undefined for one posted before and for a repeat of an earlier posting in the list (the
 * same kind and transaction).
 */
export async function postMany(trx: Knex.Transaction, clock: Clock, postings: readonly LedgerPosting[]): Promise<Array<LedgerEntryRow | undefined>> {
  if (postings.length === 0) return [];
  const posted = await postedAlready(trx, postings);
  const fresh = new Map<string, LedgerPosting>();
  for (const posting of postings) {
    const key = entryKey(posting);
    if (!posted.has(key) && !fresh.has(key)) fresh.set(key, posting);
  }
  if (fresh.size === 0) return postings.map(() => undefined);
  const now = clock.now().getTime();
  await lockBalances(trx, [...fresh.values()], now);
  const entries = new Map((await postLocked(trx, now, [...fresh.values()])).map((entry) => [entryKey({ kind: entry.kind, transactionId: entry.transaction_id }), entry]));
  return postings.map((posting) => {
    const key = entryKey(posting);
    const entry = entries.get(key);
    entries.delete(key);
    return entry;
  });
}

/** A balance row: one merchant, one currency. */
export interface BalanceKey {
  merchantId: string;
  currency: string;
}

/** The (kind, transaction) the ledger's unique index allows once. */
function entryKey(entry: { kind: string; transactionId: string }): string {
  return `${entry.kind}\u0000${entry.transactionId}`;
}

function balanceKey(key: BalanceKey): string {
  return `${key.merchantId}\u0000${key.currency}`;
}

/** (merchant_id, currency) order: every statement that locks several balance rows takes them in it. */
function byBalance(a: BalanceKey, b: BalanceKey): number {
  if (a.merchantId !== b.merchantId) return a.merchantId < b.merchantId ? -1 : 1;
  return a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0;
}

/**
 * Which of these (kind, transaction) pairs already have their entry, as `kind\0transactionId`
 * keys: one read on the unique (kind, transaction_id) index, not locking.
 */
export async function postedAlready(trx: Knex.Transaction, entries: ReadonlyArray<{ kind: LedgerKind; transactionId: string }>): Promise<Set<string>> {
  if (entries.length === 0) return new Set();
  const wanted = new Set(entries.map(entryKey));
  const rows = await trx("ledger_entries")
    .whereIn("kind", [...new Set(entries.map((e) => e.kind))])
    .whereIn("transaction_id", [...new Set(entries.map((e) => e.transactionId))])
    .select<Array<{ kind: string; transaction_id: string }>>("kind", "transaction_id");
  return new Set(rows.map((row) => entryKey({ kind: row.kind, transactionId: row.transaction_id })).filter((key) => wanted.has(key)));
}

/** Whether this deposit's credit (or this withdrawal's hold, …) is among the keys `postedAlready` answered. */
export function isPosted(posted: ReadonlySet<string>, entry: { kind: LedgerKind; transactionId: string }): boolean {
  return posted.has(entryKey(entry));
}

/**
 * Inside `trx`: the balance rows of these keys, created (at zero) on first use and locked until
 * the transaction ends, in one statement that takes them in (merchant_id, currency) order, so
 * two transactions locking several rows each never wait for each other in a circle. An
 * upsert, not INSERT IGNORE: on MySQL a duplicate-key IGNORE leaves a shared lock on the row,
 * and two postings that both hold it and then both UPDATE deadlock. ON DUPLICATE KEY UPDATE
 * takes the exclusive lock at once, so postings queue on the row instead.
 */
export async function lockBalances(trx: Knex.Transaction, keys: readonly BalanceKey[], now: number): Promise<void> {
  const unique = new Map(keys.map((key) => [balanceKey(key), key]));
  if (unique.size === 0) return;
  const rows = [...unique.values()].sort(byBalance).map((key) => ({ merchant_id: key.merchantId, currency: key.currency, available: 0, held: 0, updated_at: now }));
  await trx("balances").insert(rows).onConflict(["merchant_id", "currency"]).merge(["updated_at"]);
}

/** One balance column's deltas in a batch: their sum, and the sum of the negative ones. */
interface ColumnTotal {
  sum: number;
  debits: number;
  hasDebit: boolean;
}

const columnTotal = (): ColumnTotal => ({ sum: 0, debits: 0, hasDebit: false });

function addDelta(total: ColumnTotal, delta: number): void {
  total.sum += delta;
  if (delta < 0) {
    total.debits += delta;
    total.hasDebit = true;
  }
}

/**
 * The delta the column's condition checks: every debit before any credit when there is one (the
 * lowest the column could reach in any order of the entries), else the sum; for one entry,
 * exactly its delta, as `post` has always checked.
 */
const lowest = (total: ColumnTotal): number => (total.hasDebit ? total.debits : total.sum);

/**
 * Posts entries whose balance rows the caller has locked (`lockBalances`) and that it found not
 * posted (`postedAlready`), each (kind, transaction) once: one conditional update per balance
 * with the entries' summed deltas, then one insert of every entry, so each entry's seq comes
 * while its balance row is locked (the order statements read). Each column's condition is the lowest
 * it could reach in any order of the entries (`lowest`), so no entry, wherever a statement lists
 * it, takes available or held below zero; else INSUFFICIENT_BALANCE and the caller's transaction
 * rolls back.
 */
export async function postLocked(trx: Knex.Transaction, now: number, postings: readonly LedgerPosting[]): Promise<LedgerEntryRow[]> {
  if (postings.length === 0) return [];
  const totals = new Map<string, BalanceKey & { available: ColumnTotal; held: ColumnTotal }>();
  for (const posting of postings) {
    const key = balanceKey(posting);
    const total = totals.get(key) ?? { merchantId: posting.merchantId, currency: posting.currency, available: columnTotal(), held: columnTotal() };
    addDelta(total.available, posting.availableDelta);
    addDelta(total.held, posting.heldDelta);
    totals.set(key, total);
  }
  for (const total of [...totals.values()].sort(byBalance)) {
    const updated = await trx("balances")
      .where({ merchant_id: total.merchantId, currency: total.currency })
      .where(trx.raw("available + ? >= 0", [lowest(total.available)]))
      .where(trx.raw("held + ? >= 0", [lowest(total.held)]))
      .update({
        available: trx.raw("available + ?", [total.available.sum]),
        held: trx.raw("held + ?", [total.held.sum]),
        updated_at: now,
      });
    if (updated !== 1) throw insufficientBalance(total.currency);
  }
  const entries = postings.map(
    (posting): LedgerEntryRow => ({
      id: newId("led"),
      merchant_id: posting.merchantId,
      currency: posting.currency,
      kind: posting.kind,
      available_delta: posting.availableDelta,
      held_delta: posting.heldDelta,
      transaction_id: posting.transactionId,
      reason: posting.reason ?? null,
      ...(posting.processId === undefined ? {} : { process_id: posting.processId }),
      // The column holds 500 characters; a longer name is cut rather than refusing the money move.
      actor: posting.actor ? posting.actor.slice(0, 500) : null,
      created_at: now,
    }),
  );
  await trx("ledger_entries").insert(entries);
  return entries;
}

export async function balanceRows(db: Knex, merchantId: string): Promise<BalanceRow[]> {
  return (await db("balances").where({ merchant_id: merchantId }).orderBy("currency")) as BalanceRow[];
}

export async function balanceRow(db: Knex, merchantId: string, currency: string): Promise<BalanceRow> {
  const row = (await db("balances").where({ merchant_id: merchantId, currency }).first()) as BalanceRow | undefined;
  return row ?? { merchant_id: merchantId, currency, available: 0, held: 0, updated_at: 0 };
}

// ---------------------------------------------------------------- statements

export interface StatementBalance {
  available: number;
  held: number;
}

export interface StatementLineRow {
  id: string;
  kind: string;
  available_delta: number;
  held_delta: number;
  transaction_id: string;
  /** The credit's own process id, else the withdrawal's (joined); null for adjustments and older credits. */
  process_id: string | null;
  created_at: number;
  /** available + held after this entry. */
  balance_after: number;
}

/**
 * Where the next page of a statement starts. It carries what the first page computed, so a
 * later page is one read on the (merchant_id, currency, seq) index and never sums the ledger
 * again, however long the statement: the opening and closing of the whole range, the running
 * balance after the last line returned, and `lastSeq`, the newest entry of the range the first page saw.
 */
export interface StatementPosition {
  /** statementScope of the request that opened the statement: a cursor serves that statement only. */
  scope: string;
  /** No page shows an entry after this one: every page is the ledger as the first page saw it. */
  lastSeq: number;
  /** The seq of the last line returned. */
  afterSeq: number;
  /** The balance after that line. */
  running: StatementBalance;
  opening: StatementBalance;
  closing: StatementBalance;
}

export interface StatementPage {
  opening: StatementBalance;
  lines: StatementLineRow[];
  closing: StatementBalance;
  /** Set when more lines follow. */
  next?: StatementPosition;
}

export interface StatementQuery {
  merchantId: string;
  currency: string;
  fromMs: number;
  toMs: number;
}

/** What a statement's cursor is bound to: its merchant, currency and range (hashed: the cursor is not for reading). */
export function statementScope(query: StatementQuery): string {
  return createHash("sha256").update(JSON.stringify([query.merchantId, query.currency, query.fromMs, query.toMs])).digest("base64url").slice(0, 16);
}

export function encodeStatementCursor(p: StatementPosition): string {
  const fields = [p.scope, p.lastSeq, p.afterSeq, p.running.available, p.running.held, p.opening.available, p.opening.held, p.closing.available, p.closing.held];
  return Buffer.from(JSON.stringify(["st1", ...fields])).toString("base64url");
}

/** undefined when the text is not a cursor encodeStatementCursor issued. */
export function decodeStatementCursor(text: string): StatementPosition | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 10 || value[0] !== "st1" || typeof value[1] !== "string") return undefined;
  const numbers = value.slice(2) as unknown[];
  if (!numbers.every((n): n is number => typeof n === "number" && Number.isSafeInteger(n))) return undefined;
  const [lastSeq, afterSeq, ra, rh, oa, oh, ca, ch] = numbers as [number, number, number, number, number, number, number, number];
  if (afterSeq < 0 || afterSeq >= lastSeq) return undefined;
  return { scope: value[1], lastSeq, afterSeq, running: { available: ra, held: rh }, opening: { available: oa, held: oh }, closing: { available: ca, held: ch } };
}

/** A cursor that decodes but does not fit the statement it is used for. */
function foreignCursor(): Error {
  return validationError("cursor", "cursor: is not a cursor of this statement (it must come from a previous page of the same merchant, currency and range)");
}

/** DECIMAL (MySQL's SUM, a string from the driver) or NULL (no rows) as a number. */
const num = (v: number | string | null | undefined): number => Number(v ?? 0);

/**
 * One page of a merchant's statement of one currency over [fromMs, toMs): the balances before
 * the range (opening) and after it (closing), and at most `limit` of the entries posted in the
 * range, in seq order, each with the balance after it.
 *
 * Seq, not time, orders the lines: entries of one balance row are inserted under that row's
 * lock, so seq is the order the balance really changed in, and every running balance is one
 * the ledger had (created_at is taken before the lock and can be a millisecond out of order).
 * The same lock makes seq a snapshot boundary: an entry of this merchant and currency gets its
 * seq only after every entry before it has committed, so "seq ≤ lastSeq", the newest entry of
 * the range the first page saw, is exactly what that page saw. Later pages keep to it, so a
 * posting that lands while the statement is read is in no page, and the opening, the lines and
 * the closing always add up.
 *
 * The first page reads in one transaction (the sums and the range's seq bounds, then its
 * lines); a later page is one range read on (merchant_id, currency, seq), however many pages
 * came before. Entries are never updated or deleted, so what the cursor carries stays true; a cursor
 * whose running balance does not arrive at the closing one (made up, or of another statement)
 * is refused on the page where that shows.
 */
export async function statementPage(db: Knex, query: StatementQuery & { limit: number; after?: StatementPosition }): Promise<StatementPage> {
  const after = query.after;
  if (after) {
    if (after.scope !== statementScope(query)) throw foreignCursor();
    return pageFrom(db, query, after);
  }
  return db.transaction(
    async (trx) => {
      const scope = { merchant_id: query.merchantId, currency: query.currency };
      const before = (await trx("ledger_entries")
        .where(scope)
        .where("created_at", "<", query.fromMs)
        .sum({ available: "available_delta", held: "held_delta" })
        .first()) as { available: number | string | null; held: number | string | null } | undefined;
      const opening: StatementBalance = { available: num(before?.available), held: num(before?.held) };
      const within = (await trx("ledger_entries")
        .where(scope)
        .where("created_at", ">=", query.fromMs)
        .where("created_at", "<", query.toMs)
        .min({ low: "seq" })
        .max({ high: "seq" })
        .sum({ available: "available_delta", held: "held_delta" })
        .first()) as { low: number | string | null; high: number | string | null; available: number | string | null; held: number | string | null } | undefined;
      const closing: StatementBalance = { available: opening.available + num(within?.available), held: opening.held + num(within?.held) };
      if (within?.high == null) return { opening, lines: [], closing };
      // The range's own seq bounds, as this snapshot has them: no page reads the history
      // before the range or what came after it, and none shows an entry posted since.
      const start: StatementPosition = {
        scope: statementScope(query),
        lastSeq: num(within.high),
        afterSeq: num(within.low) - 1,
        running: opening,
        opening,
        closing,
      };
      return pageFrom(trx, query, start);
    },
    // One snapshot for every read (InnoDB's REPEATABLE READ, named in case a pool sets another
    // default); SQLite's transaction already sees one state.
    isMysql(db) ? { isolationLevel: "repeatable read" } : undefined,
  );
}

/** The lines after `from.afterSeq`, up to `from.lastSeq`, continuing its running balance. */
async function pageFrom(db: Knex, query: StatementQuery & { limit: number }, from: StatementPosition): Promise<StatementPage> {
  const rows = await db("ledger_entries as e")
    // Only a withdrawal's entries join a withdrawal: an adjustment's or deposit's id never names one.
    .leftJoin("withdrawals as w", function () {
      this.on("w.id", "=", "e.transaction_id").andOn("w.merchant_id", "=", "e.merchant_id").andOnIn("e.kind", WITHDRAWAL_KINDS);
    })
    .where({ "e.merchant_id": query.merchantId, "e.currency": query.currency })
    .where("e.seq", ">", from.afterSeq)
    .where("e.seq", "<=", from.lastSeq)
    .where("e.created_at", ">=", query.fromMs)
    .where("e.created_at", "<", query.toMs)
    .orderBy("e.seq", "asc")
    .limit(query.limit + 1)
    .select<Array<Omit<StatementLineRow, "balance_after"> & { seq: number | string }>>(
      "e.seq",
      "e.id",
      "e.kind",
      "e.available_delta",
      "e.held_delta",
      "e.transaction_id",
      "e.created_at",
      db.raw("coalesce(e.process_id, w.process_id) as process_id"),
    );
  let { available, held } = from.running;
  const lines = rows.slice(0, query.limit).map((row): StatementLineRow => {
    available += Number(row.available_delta);
    held += Number(row.held_delta);
    return {
      id: row.id,
      kind: row.kind,
      available_delta: Number(row.available_delta),
      held_delta: Number(row.held_delta),
      transaction_id: row.transaction_id,
      process_id: row.process_id ?? null,
      created_at: Number(row.created_at),
      balance_after: available + held,
    };
  });
  const page: StatementPage = { opening: from.opening, lines, closing: from.closing };
  const last = rows[lines.length - 1];
  if (rows.length > query.limit && last) {
    page.next = { ...from, afterSeq: Number(last.seq), running: { available, held } };
  } else if (available !== from.closing.available || held !== from.closing.held) {
    throw foreignCursor();
  }
  return page;
}

const WITHDRAWAL_KINDS: readonly LedgerKind[] = ["withdrawal_hold", "withdrawal_release", "withdrawal_settle"];
