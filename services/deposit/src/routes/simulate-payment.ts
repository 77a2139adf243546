import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import type { DepositContext } from "../context.js";
import { depositForToken } from "../checkout.js";
import { acceptsPayment } from "../deposit-state.js";
import { lookupMerchant } from "../merchant-lookup.js";
import { depositFromRow, getDepositRow, rowStatus } from "../store.js";
import { recordTransfer } from "../transfers.js";
import type { Rpc } from "./index.js";

/**
 * The sandbox's stand-in for the customer's bank: reports the transfer the customer was
 * asked to make (right account, amount and reference) through the same path as a real
 * bank integration. The bank transaction id derives from the deposit, so pressing the
 * button twice pays once.
 */
export function simulatePayment(ctx: DepositContext): Rpc<"simulatePayment"> {
  return {
    async simulatePayment(req) {
      const row = await depositForToken(ctx, req.token);
      // Both: a live customer's deposit stays live if the merchant later turns sandbox on,
      // and a merchant gone live (or disabled) simulates nothing any more. Asked afresh, not
      // from the cache: this is the last gate before sandbox money is paid, and rare.
      const merchant = await lookupMerchant(ctx, row.merchant_id, { fresh: true });
      if (!row.sandbox || !merchant.sandbox || !merchant.active) {
        throw serviceError(Code.PermissionDenied, "SANDBOX_ONLY", "payments can be simulated only for deposits of active sandbox merchants");
      }
      const status = rowStatus(row);
      if (!acceptsPayment(status)) {
        throw serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", `the deposit is ${status}; only a pending deposit can be paid`, { details: { status } });
      }
      if (!row.account_iban) {
        throw serviceError(Code.FailedPrecondition, "NO_ASSIGNED_ACCOUNT", "the deposit has no assigned account to pay into; an operator can confirm it");
      }
      const outcome = await recordTransfer(ctx, {
        iban: row.account_iban,
        amount: Number(row.requested_amount),
        currency: row.currency,
        senderName: row.customer_name,
        reference: row.reference,
        bankTransactionId: `SIM-${row.id}`,
      });
      if (outcome.deposit?.id !== row.id) {
        // Only possible when the deposit became final between the read and the report.
        const now = await getDepositRow(ctx.db, { depositId: row.id });
        throw serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", `the deposit is ${now.status}; only a pending deposit can be paid`, { details: { status: now.status } });
      }
      return { deposit: depositFromRow(outcome.deposit) };
    },
  };
}
