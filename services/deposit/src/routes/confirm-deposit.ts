import { Code } from "@connectrpc/connect";
import type { DepositService } from "@payments/contracts/deposit";
import { formatMajor, forUpdate, parseRequest, readCommitted, type Rpc, serviceError, transactionWithRetry, validationError } from "@payments/kit";
import { actingName, callerAttribution } from "@payments/access";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { moveDeposit } from "../deposit-moves.js";
import { amount, depositId, identifier } from "../requests.js";
import { depositFromRow, type TransferRow } from "../store.js";
import { isSandboxAccount } from "../account-kind.js";
import { giveTransferToDeposit } from "../transfer-resolution.js";

const request = z.object({ depositId, amount: amount.optional(), transferId: z.union([z.literal(""), identifier(40)]) });

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseConfirmDeposit(req: unknown): z.infer<typeof request> {
  return parseRequest(request, req);
}

/**
 * An operator's confirmation. With a transfer id it also settles an unmatched transfer:
 * the transfer is linked to the deposit in the same transaction, so it leaves the
 * unmatched list exactly when the deposit completes, and cannot pay a second deposit.
 */
export function confirmDeposit(ctx: DepositContext): Rpc<typeof DepositService, "confirmDeposit"> {
  return {
    async confirmDeposit(req) {
      const input = parseConfirmDeposit(req);
      // With a transfer: which kind of money it is, asked before the transaction.
      const transferSandbox = input.transferId === "" ? false : await transferOnSandboxAccount(ctx, input.transferId);
      // The operator completes it (maker and approver, when a second one approved), with the workload that carried them.
      const completedBy = callerAttribution("operator");
      const result = await transactionWithRetry(ctx.db, async (trx) => {
        if (input.transferId === "") return moveDeposit(trx, ctx.clock, { depositId: input.depositId, move: "complete", amount: input.amount, completedBy });
        const transfer = (await forUpdate(trx, trx("incoming_transfers").where({ id: input.transferId }).first())) as TransferRow | undefined;
        if (!transfer) throw validationError("transfer_id", `transfer_id: no incoming transfer ${input.transferId}`);
        if (transfer.deposit_id !== null) {
          throw serviceError(Code.FailedPrecondition, "TRANSFER_ALREADY_MATCHED", `transfer ${transfer.id} already paid deposit ${transfer.deposit_id}`, {
            details: { depositId: transfer.deposit_id },
          });
        }
        // The deposit is credited what the transfer brought: another amount would credit money
        // the bank never received (or keep some of it nowhere), and the books would not balance.
        if (input.amount !== undefined && input.amount !== Number(transfer.amount)) {
          throw validationError("amount", `amount: with a transfer the deposit is credited what it brought (${transfer.amount}, ${formatMajor(transfer.amount, transfer.currency)}); leave amount out`);
        }
        const moved = await giveTransferToDeposit(trx, ctx, transfer, input.depositId, { actor: actingName("operator").slice(0, 100), reason: "confirmed with this transfer" }, { transferSandbox, completedBy });
        return moved;
      }, { config: readCommitted(ctx.db) });
      ctx.outbox.nudge();
      ctx.logger.info({ depositId: input.depositId, amount: result.row.amount, transferId: input.transferId || undefined }, "deposit confirmed by an operator");
      return { deposit: depositFromRow(result.row) };
    },
  };
}

/** An unknown transfer id is the request's fault (VALIDATION_ERROR on transfer_id, as before). */
async function transferOnSandboxAccount(ctx: DepositContext, transferId: string): Promise<boolean> {
  const transfer = await ctx.db("incoming_transfers").where({ id: transferId }).first<{ iban: string } | undefined>("iban");
  if (!transfer) throw validationError("transfer_id", `transfer_id: no incoming transfer ${transferId}`);
  return isSandboxAccount(ctx, transfer.iban);
}
