import { Code } from "@connectrpc/connect";
import type { DepositService, ResolveTransferRequest } from "@payments/contracts/deposit";
import { parseRequest, readCommitted, type Rpc, serviceError, transactionWithRetry, validationError } from "@payments/kit";
import { actingName, callerAttribution } from "@payments/access";
import { z } from "zod";
import { isSandboxAccount } from "../account-kind.js";
import type { DepositContext } from "../context.js";
import { depositId, iban, identifier, text } from "../requests.js";
import { depositFromRow, transferFromRow, type DepositRow } from "../store.js";
import { applyTransferMove, lockTransfer, requireMove } from "../transfer-moves.js";
import { findTransfer, giveTransferToDeposit, refuseTransfer, returnTarget } from "../transfer-resolution.js";

const request = z.object({
  transferId: identifier(40),
  /** Ignored when an operator's assertion says who acts (always, for this operator-only RPC). */
  actor: z.string(),
  reason: text(500),
});

type Decision = { case: "match"; depositId: string } | { case: "complete" } | { case: "refuse" } | { case: "return"; iban: string; recipientName: string };

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
    case "return": {
      const given = parseRequest(
        z.object({ iban: z.union([z.literal(""), iban]), recipientName: z.union([z.literal(""), text(200)]) }),
        { iban: d.value.iban, recipientName: d.value.recipientName.trim() === "" ? "" : d.value.recipientName },
      );
      return { case: "return", ...given };
    }
    default:
      throw validationError("decision", "decision: one of match_deposit_id, complete, refuse or return is required");
  }
}

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseResolveTransfer(req: ResolveTransferRequest): { input: z.infer<typeof request>; choice: Decision } {
  return { input: parseRequest(request, req), choice: decisionOf(req) };
}

/**
 * An operator's decision on an open (unmatched or in-review) transfer, exactly one of:
 * match it to a deposit, complete the deposit it waits on in review, refuse that, or return
 * it to the sender. Each is one move of the transfer's state machine, in one transaction with
 * what it entails (the deposit's move and event, or the return request's event), retried on a
 * lock conflict. Who, when and why are recorded with the transfer.
 */
export function resolveTransfer(ctx: DepositContext): Rpc<typeof DepositService, "resolveTransfer"> {
  return {
    async resolveTransfer(req) {
      const { input, choice } = parseResolveTransfer(req);
      const decider = { actor: actingName(input.actor).slice(0, 100), reason: input.reason };
      const completedBy = callerAttribution(decider.actor);
      // Which kind of money it is, asked before the transaction (no call while rows are locked).
      const transferSandbox = choice.case === "refuse" ? false : await isSandboxAccount(ctx, (await findTransfer(ctx.db, input.transferId)).iban);
      const deposit = await transactionWithRetry(
        ctx.db,
        async (trx): Promise<DepositRow | undefined> => {
          const transfer = await lockTransfer(trx, input.transferId);
          switch (choice.case) {
            case "refuse":
              await refuseTransfer(trx, ctx, transfer, decider);
              return undefined;
            case "return":
              // A closed transfer is refused as such before anything is asked of the request.
              requireMove(transfer, "request_return");
              await applyTransferMove(trx, ctx.clock, transfer, {
                move: "request_return",
                ...decider,
                resolves: true,
                returnTo: { ...returnTarget(transfer, choice), sandbox: transferSandbox },
              });
              return undefined;
            case "complete":
              if (transfer.status !== "review" || !transfer.review_deposit_id) {
                throw serviceError(Code.FailedPrecondition, "TRANSFER_NOT_OPEN", `transfer ${transfer.id} waits on no deposit; match it to one instead`, { details: { status: transfer.status } });
              }
              return (await giveTransferToDeposit(trx, ctx, transfer, transfer.review_deposit_id, decider, { move: "complete", transferSandbox, completedBy })).row;
            case "match":
              return (await giveTransferToDeposit(trx, ctx, transfer, choice.depositId, decider, { move: "match", transferSandbox, completedBy })).row;
          }
        },
        { config: readCommitted(ctx.db) },
      );
      // A completed deposit's event, or the return request's, waits in the outbox.
      if (deposit || choice.case === "return") ctx.outbox.nudge();
      // The transfer as the decision left it (its status, resolution and deposit changed in the transaction).
      const row = await findTransfer(ctx.db, input.transferId);
      ctx.logger.info({ transferId: row.id, decision: choice.case, actor: decider.actor, depositId: deposit?.id }, "transfer resolved by an operator");
      return { transfer: transferFromRow(row), deposit: deposit ? depositFromRow(deposit) : undefined };
    },
  };
}
