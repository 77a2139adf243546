import { Code } from "@connectrpc/connect";
import type { ResolveTransferRequest } from "@payments/contracts/deposit";
import { parseRequest, serviceError, validationError } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { depositId, iban, identifier, text } from "../requests.js";
import { depositFromRow, transferFromRow, type TransferRow } from "../store.js";
import { requestTransferReturn } from "../transfer-returns.js";
import { isSandboxAccount } from "../account-kind.js";
import { findTransfer, giveTransferToDeposit, lockTransfer, refuseTransfer } from "../transfer-resolution.js";
import type { Rpc } from "./index.js";

const request = z.object({
  transferId: identifier(40),
  actor: text(100),
  reason: text(500),
});

type Decision = { case: "match"; depositId: string } | { case: "complete" } | { case: "refuse" } | { case: "return"; iban: string };

/** The one decision the request carries, its fields checked like any other. */
function decisionOf(req: ResolveTransferRequest): Decision {
  const d = req.decision;
  switch (d.case) {
    case "matchDepositId":
      return { case: "match", depositId: parseRequest(z.object({ matchDepositId: depositId }), { matchDepositId: d.value }).matchDepositId };
    case "complete":
    case "refuse":
      if (!d.value) throw validationError(d.case, `${d.case}: must be true`);
      return { case: d.case };
    case "return":
      return { case: "return", iban: d.value.iban === "" ? "" : parseRequest(z.object({ iban }), { iban: d.value.iban }).iban };
    default:
      throw validationError("decision", "decision: one of match_deposit_id, complete, refuse or return is required");
  }
}

/**
 * An operator's decision on an open (unmatched or in-review) transfer, exactly one of:
 * match it to a deposit, complete the deposit it waits on in review, refuse that, or return
 * it to the sender. Who, when and why are recorded with the transfer.
 */
export function resolveTransfer(ctx: DepositContext): Rpc<"resolveTransfer"> {
  return {
    async resolveTransfer(req) {
      const input = parseRequest(request, req);
      const choice = decisionOf(req);
      const decider = { actor: input.actor, reason: input.reason };
      if (choice.case === "return") {
        const transfer = await requestTransferReturn(ctx, input.transferId, choice.iban, decider);
        return { transfer: transferFromRow(transfer) };
      }
      // Which kind of money it is, asked before the transaction (no call while rows are locked).
      const transferSandbox = choice.case === "refuse" ? false : await isSandboxAccount(ctx, (await findTransfer(ctx.db, input.transferId)).iban);
      const result = await ctx.db.transaction(async (trx) => {
        const transfer: TransferRow = await lockTransfer(trx, input.transferId);
        if (choice.case === "refuse") {
          await refuseTransfer(trx, ctx, transfer, decider);
          return { deposit: undefined };
        }
        let target: string;
        if (choice.case === "match") target = choice.depositId;
        else {
          if (transfer.status !== "review" || !transfer.review_deposit_id) {
            throw serviceError(Code.FailedPrecondition, "TRANSFER_NOT_OPEN", `transfer ${transfer.id} waits on no deposit; match it to one instead`, { details: { status: transfer.status } });
          }
          target = transfer.review_deposit_id;
        }
        const moved = await giveTransferToDeposit(trx, ctx, transfer, target, decider, { action: choice.case === "complete" ? "completed" : "matched", transferSandbox });
        return { deposit: moved.row };
      });
      if (result.deposit) ctx.outbox.nudge();
      // The transfer as the decision left it (its status, resolution and deposit changed in the transaction).
      const row = await findTransfer(ctx.db, input.transferId);
      ctx.logger.info({ transferId: row.id, decision: choice.case, actor: input.actor, depositId: result.deposit?.id }, "transfer resolved by an operator");
      return { transfer: transferFromRow(row), deposit: result.deposit ? depositFromRow(result.deposit) : undefined };
    },
  };
}
