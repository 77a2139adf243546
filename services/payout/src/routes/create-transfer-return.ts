import { Code } from "@connectrpc/connect";
import { isUniqueViolation, newId, parseRequest, serviceError } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { amount, currency, iban, identifier, text, turkishIbanProblem } from "../requests.js";
import { latestReturnOfTransfer, returnRowStatus, transferReturnFromRow, type TransferReturnRow } from "../transfer-returns.js";
import type { Rpc } from "./index.js";

/**
 * Creates a pending return of an incoming transfer's money to its sender; the worker sends
 * it (src/transfer-return-worker.ts). Nothing is posted to the ledger and no balance moves:
 * the money is in the deposit service's suspense, not a merchant's.
 *
 * Idempotent by transfer_id, so the deposit service can repeat the call after a crash or a
 * lost answer without paying the sender twice: while the transfer's latest return is
 * pending, processing or completed, that return is answered (created false) and the
 * request's other fields are ignored. Only when the latest one FAILED (a closed account, a
 * wrong IBAN) does a call create a new attempt, possibly to another IBAN. The unique
 * (transfer_id, attempt) index settles two racing calls: the loser answers the winner's row.
 */
export function createTransferReturn(ctx: PayoutContext): Rpc<"createTransferReturn"> {
  const request = z.object({
    transferId: identifier(40),
    iban,
    recipientName: text(200),
    amount,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    sandbox: z.boolean(),
    reason: text(500),
    actor: text(200),
  });

  const existing = (row: TransferReturnRow) => ({ transferReturn: transferReturnFromRow(row), created: false });

  return {
    async createTransferReturn(req) {
      const input = parseRequest(request, req);
      const ibanProblem = turkishIbanProblem(input.iban);
      if (ibanProblem) throw serviceError(Code.InvalidArgument, "INVALID_IBAN", `iban: ${ibanProblem}`, { field: "iban" });

      const latest = await latestReturnOfTransfer(ctx.db, input.transferId);
      if (latest && returnRowStatus(latest) !== "failed") return existing(latest);

      const now = ctx.clock.now().getTime();
      const row: TransferReturnRow = {
        id: newId("trr"),
        transfer_id: input.transferId,
        attempt: (latest ? Number(latest.attempt) : 0) + 1,
        status: "pending",
        amount: input.amount,
        currency: input.currency,
        iban: input.iban,
        recipient_name: input.recipientName,
        sandbox: input.sandbox,
        reason: input.reason,
        actor: input.actor,
        failure_reason: null,
        dispatched_at: null,
        dispatch_attempts: 0,
        bank_reference: null,
        awaiting_operator: false,
        created_at: now,
        updated_at: now,
        completed_at: null,
      };
      try {
        await ctx.db("transfer_returns").insert(row);
      } catch (err) {
        if (isUniqueViolation(err)) {
          const raced = await latestReturnOfTransfer(ctx.db, input.transferId);
          if (raced) return existing(raced);
        }
        throw err;
      }
      ctx.logger.info(
        { transferReturnId: row.id, transferId: row.transfer_id, attempt: row.attempt, amount: row.amount, currency: row.currency, sandbox: input.sandbox, actor: input.actor },
        "transfer return created",
      );
      return { transferReturn: transferReturnFromRow(row), created: true };
    },
  };
}
