import { Code } from "@connectrpc/connect";
import { newId, serviceError, type Clock } from "@payments/kit";
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
