import { fromBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { TransferReturnChangedSchema, TransferReturnStatus } from "@payments/contracts/payout";
import { TRANSFER_RETURN_COMPLETED_TOPIC, TRANSFER_RETURN_FAILED_TOPIC } from "@payments/contracts";
import { Code } from "@connectrpc/connect";
import { forUpdate, serviceError, validationError, type Subscription } from "@payments/kit";
import type { DepositContext } from "./context.js";
import type { TransferRow } from "./store.js";
import { recordSuspense } from "./suspense.js";
import { recordTransferAction } from "./transfer-actions.js";
import { isSandboxAccount } from "./account-kind.js";
import { lockTransfer, requireOpen, type Decider } from "./transfer-resolution.js";

/** The durable consumers (one per topic) that settle returns when the payout service reports them. */
export const TRANSFER_RETURNS_CONSUMER = "deposit-transfer-returns";

/**
 * Returns an open transfer's money to its sender. First, in one transaction, the transfer
 * becomes `returning`, its money leaves suspense and the request is recorded: from then on
 * no other decision can give it to a deposit. Then the payout service is asked to pay it
 * (idempotent by transfer id). If that call fails, the transfer is put back as it was, its
 * money back in suspense, and the error goes to the operator.
 */
export async function requestTransferReturn(ctx: DepositContext, transferId: string, iban: string, decider: Decider): Promise<TransferRow> {
  let payouts: ReturnType<DepositContext["payouts"]>;
  try {
    payouts = ctx.payouts();
  } catch (err) {
    throw serviceError(Code.FailedPrecondition, "RETURNS_UNAVAILABLE", `cannot return money: ${(err as Error).message}`);
  }
  const before = await ctx.db.transaction(async (trx) => {
    const transfer = await lockTransfer(trx, transferId);
    requireOpen(transfer);
    const to = iban || transfer.sender_iban || "";
    if (!to) throw validationError("iban", "iban: the bank gave no sender IBAN for this transfer; name the IBAN to return it to");
    const now = ctx.clock.now().getTime();
    await trx("incoming_transfers").where({ id: transfer.id }).update({ status: "returning", resolved_by: decider.actor, resolved_at: now, resolution: decider.reason });
    await recordSuspense(trx, transfer, "returned", now);
    await recordTransferAction(trx, ctx.clock, { transferId: transfer.id, action: "return_requested", actor: decider.actor, reason: `to ${to}: ${decider.reason}` });
    return { transfer, to };
  });
  const { transfer, to } = before;
  try {
    await payouts.createTransferReturn({
      transferId: transfer.id,
      iban: to,
      recipientName: transfer.sender_name,
      amount: BigInt(transfer.amount),
      currency: transfer.currency,
      sandbox: await isSandboxAccount(ctx, transfer.iban),
      reason: decider.reason,
      actor: decider.actor,
    });
  } catch (err) {
    await ctx.db.transaction(async (trx) => {
      const now = ctx.clock.now().getTime();
      await trx("incoming_transfers").where({ id: transfer.id, status: "returning" }).update({ status: transfer.status, resolved_by: transfer.resolved_by, resolved_at: transfer.resolved_at, resolution: transfer.resolution });
      await recordSuspense(trx, transfer, "return_failed", now);
      await recordTransferAction(trx, ctx.clock, { transferId: transfer.id, action: "return_failed", actor: decider.actor, reason: `the payout service did not take the return: ${(err as Error).message}` });
    });
    throw err;
  }
  ctx.logger.info({ transferId: transfer.id, iban: to, amount: Number(transfer.amount), actor: decider.actor }, "transfer return requested");
  return (await ctx.db("incoming_transfers").where({ id: transfer.id }).first()) as TransferRow;
}

/**
 * Settles a return the payout service finished: completed → the transfer is `returned`;
 * failed → it is open again (unmatched), its money back in suspense, for another decision.
 * Applied once: only a transfer still `returning` changes.
 */
export async function settleTransferReturn(ctx: DepositContext, data: Uint8Array): Promise<void> {
  const event = fromBinary(TransferReturnChangedSchema, data);
  const ret = event.transferReturn;
  if (!ret) return;
  const completed = ret.status === TransferReturnStatus.COMPLETED;
  if (!completed && ret.status !== TransferReturnStatus.FAILED) return;
  await ctx.db.transaction(async (trx) => {
    const transfer = (await forUpdate(trx, trx("incoming_transfers").where({ id: ret.transferId }).first())) as TransferRow | undefined;
    if (!transfer || transfer.status !== "returning") return;
    const at = event.occurredAt ? timestampMs(event.occurredAt) : ctx.clock.now().getTime();
    if (completed) {
      await trx("incoming_transfers").where({ id: transfer.id }).update({ status: "returned" });
      await recordTransferAction(trx, ctx.clock, { transferId: transfer.id, action: "returned", actor: "payout", reason: `paid back, bank reference ${ret.bankReference || "-"}` });
    } else {
      await trx("incoming_transfers").where({ id: transfer.id }).update({ status: "unmatched" });
      await recordSuspense(trx, transfer, "return_failed", at);
      await recordTransferAction(trx, ctx.clock, { transferId: transfer.id, action: "return_failed", actor: "payout", reason: ret.failureReason || "the return failed" });
    }
  });
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
