import { fromBinary } from "@bufbuild/protobuf";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { isUniqueViolation, sampleConsumerPending, transactionWithRetry, type Subscription } from "@payments/kit";
import type { PayoutContext } from "./context.js";
import { post } from "./ledger.js";

/** The deposit service's subject for completed deposits (under the bus prefix). */
export const DEPOSIT_COMPLETED_TOPIC = "deposit.v1.deposit_completed";
export const DEPOSIT_CREDITS_CONSUMER = "payout-deposit-credits";

/**
 * Credits a completed deposit's amount to the merchant's available balance, once: the
 * ledger's unique (kind, transaction) index turns a second delivery of the event, or a
 * racing one on another replica, into no change. A failure throws, so the event is
 * delivered again.
 */
export async function creditDeposit(ctx: PayoutContext, data: Uint8Array): Promise<"credited" | "already" | "refused"> {
  const event = fromBinary(DepositStatusChangedSchema, data);
  const deposit = event.deposit;
  if (!deposit || deposit.status !== DepositStatus.COMPLETED) throw new Error(`event ${event.eventId} is not a completed deposit`);
  // Sandbox money (simulated payments, made-up accounts) must never become a live balance,
  // which a live connector would pay out for real. A merchant cannot switch kinds once it has
  // a deposit, so this holds only a deposit that raced such a switch; it is logged for an
  // operator, who can adjust the balance by hand if the money was real after all. It asks the
  // merchant service afresh rather than the cache: this is the last gate before sandbox money
  // becomes spendable, it runs off the request path, and only for sandbox deposits.
  if (deposit.sandbox) {
    const { merchant } = await ctx.merchants.getMerchant({ merchantId: deposit.merchantId });
    if (!merchant) throw new Error(`the merchant service answered without merchant ${deposit.merchantId}`);
    if (!merchant.sandbox) {
      ctx.logger.error(
        { depositId: deposit.id, merchantId: deposit.merchantId, amount: Number(deposit.amount), eventId: event.eventId },
        "sandbox deposit not credited: its merchant is live",
      );
      return "refused";
    }
  }
  try {
    const entry = await transactionWithRetry(ctx.db, (trx) =>
      post(trx, ctx.clock, {
        merchantId: deposit.merchantId,
        currency: deposit.currency,
        kind: "deposit_credit",
        availableDelta: Number(deposit.amount),
        heldDelta: 0,
        transactionId: deposit.id,
        // Kept for statements: the deposit service has it, and a statement must not ask it per line.
        processId: deposit.processId,
      }),
    );
    if (!entry) return "already";
    ctx.logger.info({ depositId: deposit.id, merchantId: deposit.merchantId, amount: Number(deposit.amount) }, "deposit credited");
    return "credited";
  } catch (err) {
    if (isUniqueViolation(err)) return "already";
    throw err;
  }
}

export async function startDepositCredits(ctx: PayoutContext): Promise<Subscription> {
  const stopSampling = sampleConsumerPending(ctx.metrics, ctx.bus, [DEPOSIT_CREDITS_CONSUMER]);
  const subscription = await ctx.bus.consume(DEPOSIT_CREDITS_CONSUMER, [DEPOSIT_COMPLETED_TOPIC], async (message) => {
    await creditDeposit(ctx, message.data);
  });
  return {
    async stop() {
      stopSampling();
      await subscription.stop();
    },
  };
}
