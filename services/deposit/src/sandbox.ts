import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import type { DepositContext } from "./context.js";
import { acceptsPayment } from "./deposit-state.js";
import { lookupMerchant } from "./merchant-lookup.js";
import { getDepositRow, rowStatus, type DepositRow } from "./store.js";
import { recordTransfer, type TransferOutcome } from "./transfers.js";

/**
 * What the sandbox may do to a deposit, in one place for the checkout's "simulate payment"
 * and the merchant's sandbox helpers (SandboxPayDeposit, SandboxExpireDeposit), so no path
 * ever simulates anything on a live deposit.
 */

/** The bank transaction id prefix of a transfer the sandbox pay helper reports: recognisable as simulated in the transfer list. */
export const SANDBOX_TRANSFER_PREFIX = "sandbox-";

/**
 * Refuses (SANDBOX_ONLY) unless the deposit was made as a sandbox deposit AND its merchant is
 * still an active sandbox merchant. Both: a live customer's deposit stays live if the merchant
 * later turns sandbox on, and a merchant gone live (or disabled) simulates nothing any more.
 * The merchant is asked afresh, not from the cache: this is the last gate before sandbox money
 * moves, and it is rare.
 */
export async function requireSandbox(ctx: DepositContext, row: DepositRow): Promise<void> {
  const merchant = await lookupMerchant(ctx, row.merchant_id, { fresh: true });
  if (!row.sandbox || !merchant.sandbox || !merchant.active) {
    throw serviceError(Code.PermissionDenied, "SANDBOX_ONLY", "payments can be simulated only for deposits of active sandbox merchants");
  }
}

function notPayable(status: string): never {
  throw serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", `the deposit is ${status}; only a pending deposit can be paid`, { details: { status } });
}

export interface SimulatedTransfer {
  amount: number;
  senderName: string;
  bankTransactionId: string;
  /** Who simulates it, in words: the merchant's API key or user, an operator, or the checkout page. */
  reportedBy: string;
}

/**
 * Pays a sandbox deposit (already passed by requireSandbox) the way its customer would: a
 * transfer into its assigned account carrying its reference, reported through recordTransfer,
 * the path of every bank report. Matching by reference, completion with the amount received,
 * the outbox event (callback, balance, ledger) are therefore exactly those of a real payment.
 * The caller picks a bank transaction id derived from the deposit, so a repeat pays once.
 */
export async function paySandboxDeposit(ctx: DepositContext, row: DepositRow, transfer: SimulatedTransfer): Promise<TransferOutcome & { deposit: DepositRow }> {
  const status = rowStatus(row);
  if (!acceptsPayment(status)) notPayable(status);
  if (!row.account_iban) {
    throw serviceError(Code.FailedPrecondition, "NO_ASSIGNED_ACCOUNT", "the deposit has no assigned account to pay into; an operator can confirm it");
  }
  const outcome = await recordTransfer(ctx, {
    iban: row.account_iban,
    amount: transfer.amount,
    currency: row.currency,
    senderName: transfer.senderName,
    reference: row.reference,
    bankTransactionId: transfer.bankTransactionId,
    source: "sandbox",
    reportedBy: transfer.reportedBy,
  });
  if (outcome.deposit?.id === row.id) return { ...outcome, deposit: outcome.deposit };
  // Another amount under a merchant's `review` rule: the transfer waits, attached to this
  // deposit, which stays pending until an operator decides, exactly as a real one would.
  if (outcome.transfer.status === "review" && outcome.transfer.review_deposit_id === row.id) {
    return { ...outcome, deposit: await getDepositRow(ctx.db, { depositId: row.id }) };
  }
  // Only possible when the deposit became final between the read and the report (the
  // transfer then stays unmatched, for an operator, as a real one would).
  const now = await getDepositRow(ctx.db, { depositId: row.id });
  notPayable(now.status);
}
