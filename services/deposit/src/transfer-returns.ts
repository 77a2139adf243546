import { fromBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { TRANSFER_RETURN_COMPLETED_TOPIC, TRANSFER_RETURN_FAILED_TOPIC } from "@payments/contracts";
import { TransferReturnChangedSchema, TransferReturnStatus } from "@payments/contracts/payout";
import { forUpdate, readCommitted, transactionWithRetry, type Subscription } from "@payments/kit";
import type { DepositContext } from "./context.js";
import type { TransferRow } from "./store.js";
import { applyTransferMove } from "./transfer-moves.js";

/**
 * Returns of an incoming transfer's money to its sender. The decision (an operator's
 * `transfer return`, or a merchant's late-payment rule) moves the transfer to `returning` and
 * writes a TransferReturnRequested event to the outbox in one transaction (transfer-moves.ts);
 * the payout service creates exactly that attempt from the event and pays it. Here its answer
 * comes back: completed → `returned`; failed → `unmatched` again, its money back in suspense,
 * for another decision.
 */

/** The durable consumers (one per topic) that settle returns when the payout service reports them. */
export const TRANSFER_RETURNS_CONSUMER = "deposit-transfer-returns";

/**
 * Settles a return the payout service finished. Applied once, and only to the attempt the
 * transfer is waiting on: a late or repeated answer about an earlier attempt (or for a
 * transfer that is no longer returning) changes nothing.
 */
export async function settleTransferReturn(ctx: DepositContext, data: Uint8Array): Promise<void> {
  const event = fromBinary(TransferReturnChangedSchema, data);
  const ret = event.transferReturn;
  if (!ret) return;
  const completed = ret.status === TransferReturnStatus.COMPLETED;
  if (!completed && ret.status !== TransferReturnStatus.FAILED) return;
  const at = event.occurredAt ? timestampMs(event.occurredAt) : ctx.clock.now().getTime();
  const settled = await transactionWithRetry(
    ctx.db,
    async (trx) => {
      const transfer = (await forUpdate(trx, trx("incoming_transfers").where({ id: ret.transferId }).first())) as TransferRow | undefined;
      if (!transfer || transfer.status !== "returning") return undefined;
      // 0: asked for before attempts were counted; any answer is about it.
      const waitingOn = Number(transfer.return_attempts ?? 0);
      if (waitingOn !== 0 && ret.attempt !== waitingOn) return undefined;
      return applyTransferMove(trx, ctx.clock, transfer, {
        move: completed ? "return_completed" : "return_failed",
        actor: "payout",
        reason: completed ? `paid back, bank reference ${ret.bankReference || "-"}` : ret.failureReason || "the return failed",
        at,
      });
    },
    { config: readCommitted(ctx.db) },
  );
  if (settled) ctx.logger.info({ transferId: settled.id, attempt: ret.attempt, status: settled.status }, completed ? "transfer returned to its sender" : "transfer return failed: the transfer is open again");
}

/**
 * One durable consumer per topic: a consumer filtering on several subjects needs NATS 2.10,
 * and the servers this runs on include older ones.
 */
export function startTransferReturnSettlement(ctx: DepositContext): Promise<Subscription[]> {
  return Promise.all(
    [TRANSFER_RETURN_COMPLETED_TOPIC, TRANSFER_RETURN_FAILED_TOPIC].map((topic) =>
      ctx.bus.consume(`${TRANSFER_RETURNS_CONSUMER}-${topic.split(".").at(-1)!.replace(/_/g, "-")}`, [topic], (message) => settleTransferReturn(ctx, message.data)),
    ),
  );
}
