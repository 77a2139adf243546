import { Code } from "@connectrpc/connect";
import { isMysql, newId, serviceError, type Clock } from "@payments/kit";
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
  const existing = await trx("ledger_entries").where({ kind: posting.kind, transaction_id: posting.transactionId }).first();
  if (existing) return undefined;
  const now = clock.now().getTime();
  // An upsert, not INSERT IGNORE: on MySQL a duplicate-key IGNORE leaves a shared lock on
  // the row, and two postings that both hold it and then both UPDATE deadlock. ON DUPLICATE
  // KEY UPDATE takes the exclusive lock at once, so postings queue on the row instead.
  await trx("balances")
    .insert({ merchant_id: posting.merchantId, currency: posting.currency, available: 0, held: 0, updated_at: now })
    .onConflict(["merchant_id", "currency"])
    .merge(["updated_at"]);
  const updated = await trx("balances")
    .where({ merchant_id: posting.merchantId, currency: posting.currency })
    .where(trx.raw("available + ? >= 0", [posting.availableDelta]))
    .where(trx.raw("held + ? >= 0", [posting.heldDelta]))
    .update({
      available: trx.raw("available + ?", [posting.availableDelta]),
      held: trx.raw("held + ?", [posting.heldDelta]),
      updated_at: now,
    });
  if (updated !== 1) throw insufficientBalance(posting.currency);
  const entry: LedgerEntryRow = {
    id: newId("led"),
    merchant_id: posting.merchantId,
    currency: posting.currency,
    kind: posting.kind,
    available_delta: posting.availableDelta,
    held_delta: posting.heldDelta,
    transaction_id: posting.transactionId,
    reason: posting.reason ?? null,
    ...(posting.processId === undefined ? {} : { process_id: posting.processId }),
    created_at: now,
  };
  await trx("ledger_entries").insert(entry);
  return entry;
}

export async function balanceRows(db: Knex, merchantId: string): Promise<BalanceRow[]> {
  return (await db("balances").where({ merchant_id: merchantId }).orderBy("currency")) as BalanceRow[];
}

export async function balanceRow(db: Knex, merchantId: string, currency: string): Promise<BalanceRow> {
  const row = (await db("balances").where({ merchant_id: merchantId, currency }).first()) as BalanceRow | undefined;
  return row ?? { merchant_id: merchantId, currency, available: 0, held: 0, updated_at: 0 };
}

// ---------------------------------------------------------------- statements

/** At most this many entries in one statement; a longer range is refused (ask a shorter one). */
export const STATEMENT_MAX_LINES = 10_000;

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

export interface Statement {
  opening: StatementBalance;
  lines: StatementLineRow[];
  closing: StatementBalance;
}

/**
 * One merchant's ledger of one currency over [fromMs, toMs): the sums of every entry posted
 * before fromMs (opening), the entries posted in the range in seq order, and opening plus
 * them (closing). Seq, not time, orders the lines: entries of one balance row are inserted
 * under that row's lock, so seq is the order the balance really changed in, and every
 * running balance is one the ledger had (created_at is taken before the lock and can be a
 * millisecond out of order). All reads are in one transaction, so a posting racing the
 * statement is in both the opening and the lines or in neither. Returns undefined when the
 * range holds more than `maxLines` entries.
 */
export async function statement(db: Knex, query: { merchantId: string; currency: string; fromMs: number; toMs: number; maxLines?: number }): Promise<Statement | undefined> {
  const maxLines = query.maxLines ?? STATEMENT_MAX_LINES;
  return db.transaction(
    async (trx) => {
      const scope = { "e.merchant_id": query.merchantId, "e.currency": query.currency };
      const sums = (await trx("ledger_entries as e")
        .where(scope)
        .where("e.created_at", "<", query.fromMs)
        .sum({ available: "e.available_delta", held: "e.held_delta" })
        .first()) as { available: number | string | null; held: number | string | null } | undefined;
      // SUM is DECIMAL on MySQL (a string from the driver) and NULL over no rows.
      const opening: StatementBalance = { available: Number(sums?.available ?? 0), held: Number(sums?.held ?? 0) };
      const rows = (await trx("ledger_entries as e")
        // Only a withdrawal's entries join a withdrawal: an adjustment's or deposit's id never names one.
        .leftJoin("withdrawals as w", function () {
          this.on("w.id", "=", "e.transaction_id").andOn("w.merchant_id", "=", "e.merchant_id").andOnIn("e.kind", WITHDRAWAL_KINDS);
        })
        .where(scope)
        .where("e.created_at", ">=", query.fromMs)
        .where("e.created_at", "<", query.toMs)
        .orderBy("e.seq", "asc")
        .limit(maxLines + 1)
        .select("e.id", "e.kind", "e.available_delta", "e.held_delta", "e.transaction_id", "e.created_at", trx.raw("coalesce(e.process_id, w.process_id) as process_id"))) as Array<
        Omit<StatementLineRow, "balance_after">
      >;
      if (rows.length > maxLines) return undefined;
      let available = opening.available;
      let held = opening.held;
      const lines = rows.map((row): StatementLineRow => {
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
      return { opening, lines, closing: { available, held } };
    },
    // One snapshot for every read (InnoDB's REPEATABLE READ, named in case a pool sets another
    // default); SQLite's transaction already sees one state.
    isMysql(db) ? { isolationLevel: "repeatable read" } : undefined,
  );
}

const WITHDRAWAL_KINDS: readonly LedgerKind[] = ["withdrawal_hold", "withdrawal_release", "withdrawal_settle"];
