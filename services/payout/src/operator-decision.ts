import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import type { Knex } from "knex";
import type { PayoutContext } from "./context.js";
import { getWithdrawalRow, rowStatus, type WithdrawalRow } from "./store.js";

/**
 * An operator may decide a processing withdrawal only when the bank cannot still decide
 * it behind their back: the bank accepted it without deciding (awaiting an operator), or
 * it was never handed to the bank. While a send is in flight or due to be repeated,
 * releasing the held amount could pay the merchant twice if the bank then executes it.
 * Runs inside the move's transaction, on the locked row, which it returns.
 */
export async function requireOperatorDecidable(trx: Knex.Transaction, ctx: PayoutContext, withdrawalId: string): Promise<WithdrawalRow> {
  const row = await getWithdrawalRow(trx, { withdrawalId }, { lock: true });
  if (rowStatus(row) !== "processing") return row; // the move itself refuses with the status
  if (Boolean(row.awaiting_operator) || row.dispatched_at === null) return row;
  throw serviceError(
    Code.FailedPrecondition,
    "BANK_ANSWER_PENDING",
    `withdrawal ${row.id} is with the bank and its answer is still awaited; the worker sends it again with the same key every ${Math.round(ctx.config.PAYOUT_RESEND_AFTER / 1000)} s until the bank decides`,
  );
}
