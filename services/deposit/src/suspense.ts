import { newId } from "@payments/kit";
import type { Knex } from "knex";
import type { TransferRow } from "./store.js";

/**
 * The suspense ledger: money that arrived on a receiving account and belongs to no deposit
 * yet, per account (IBAN) and currency, never in a merchant's balance. A transfer enters
 * with +amount when it is kept unmatched or in review, and leaves with -amount when an
 * operator (or a rule) gives it to a deposit (`released`) or it is paid back to the sender
 * (`returned`); a failed return puts it back (`return_failed`, +amount). A transfer that
 * completes a deposit on arrival never enters it.
 */
export type SuspenseKind = "received" | "released" | "returned" | "return_failed";

const SIGN: Readonly<Record<SuspenseKind, 1 | -1>> = { received: 1, released: -1, returned: -1, return_failed: 1 };

export async function recordSuspense(
  trx: Knex.Transaction,
  transfer: Pick<TransferRow, "id" | "iban" | "currency" | "amount">,
  kind: SuspenseKind,
  at: number,
  depositId: string | null = null,
): Promise<void> {
  await trx("suspense_entries").insert({
    id: newId("sus"),
    iban: transfer.iban,
    currency: transfer.currency,
    transfer_id: transfer.id,
    amount: SIGN[kind] * Number(transfer.amount),
    kind,
    deposit_id: depositId,
    at,
  });
}

export interface SuspenseBalance {
  iban: string;
  currency: string;
  amount: number;
}

/** The suspense balance per account and currency at `until` (exclusive; now when absent). */
export async function suspenseBalances(db: Knex, until?: number): Promise<SuspenseBalance[]> {
  const query = db("suspense_entries").select("iban", "currency").sum({ amount: "amount" }).groupBy("iban", "currency").orderBy(["iban", "currency"]);
  if (until !== undefined) query.where("at", "<", until);
  const rows = (await query) as Array<{ iban: string; currency: string; amount: number | string | null }>;
  return rows.map((row) => ({ iban: row.iban, currency: row.currency, amount: Number(row.amount ?? 0) }));
}
