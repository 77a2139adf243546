import { fromBinary } from "@bufbuild/protobuf";
import { DEPOSIT_COMPLETED_TOPIC } from "@payments/contracts";
import { DepositStatus, DepositStatusChangedSchema, type Deposit } from "@payments/contracts/deposit";
import { isUniqueViolation, sampleConsumerPending, transactionWithRetry, type Subscription } from "@payments/kit";
import type { PayoutContext } from "./context.js";
import { post } from "./ledger.js";
import { isWithheld, SANDBOX_DEPOSIT_OF_LIVE_MERCHANT, withholdCredit } from "./withheld-credits.js";

/** The deposit service's subject for completed deposits (under the bus prefix); named in @payments/contracts. */
export { DEPOSIT_COMPLETED_TOPIC };
export const DEPOSIT_CREDITS_CONSUMER = "payout-deposit-credits";

/**
 * Credits a completed deposit's amount to the merchant's available balance, once: the
 * ledger's unique (kind, transaction) index turns a second delivery of the event, or a
 * racing one on another replica, into no change. A sandbox deposit whose merchant is live is
 * not credited but withheld (src/withheld-credits.ts), once, for an operator to decide. A
 * failure throws, so the event is delivered again.
 *
 * "refused": not credited, its credit withheld (this delivery recorded it, or an earlier one
 * did); "already": credited before, nothing changed.
 */
export async function creditDeposit(ctx: PayoutContext, data: Uint8Array): Promise<"credited" | "already" | "refused"> {
  const event = fromBinary(DepositStatusChangedSchema, data);
  const deposit = event.deposit;
  if (!deposit || deposit.status !== DepositStatus.COMPLETED) throw new Error(`event ${event.eventId} is not a completed deposit`);
  // Sandbox money (simulated payments, made-up accounts) must never become a live balance,
  // which a live connector would pay out for real. A merchant cannot switch kinds once it has
  // a deposit, so this holds only a deposit that raced such a switch; its credit is withheld
  // for an operator, who credits it (the money was real after all) or dismisses it. It asks
  // the merchant service afresh rather than the cache: this is the last gate before sandbox
  // money becomes spendable, it runs off the request path, and only for sandbox deposits.
  if (deposit.sandbox) {
    const { merchant } = await ctx.merchants.getMerchant({ merchantId: deposit.merchantId });
    if (!merchant) throw new Error(`the merchant service answered without merchant ${deposit.merchantId}`);
    if (!merchant.sandbox) return withhold(ctx, event.eventId, deposit);
  }
  try {
    const entry = await transactionWithRetry(ctx.db, async (trx) => {
      // A deposit whose credit was withheld is the operator's to decide, even when this delivery
      // found its merchant sandbox (it asked just before the switch, racing the one that withheld).
      if (await isWithheld(trx, deposit.id)) return "withheld" as const;
      return post(trx, ctx.clock, {
        merchantId: deposit.merchantId,
        currency: deposit.currency,
        kind: "deposit_credit",
        availableDelta: Number(deposit.amount),
        heldDelta: 0,
        transactionId: deposit.id,
        // Kept for statements: the deposit service has it, and a statement must not ask it per line.
        processId: deposit.processId,
      });
    });
    if (entry === "withheld") return "refused";
    if (!entry) return "already";
    ctx.logger.info({ depositId: deposit.id, merchantId: deposit.merchantId, amount: Number(deposit.amount) }, "deposit credited");
    return "credited";
  } catch (err) {
    if (isUniqueViolation(err)) return "already";
    throw err;
  }
}

/** Records the deposit's credit as withheld (once, whatever the deliveries); posts nothing. */
async function withhold(ctx: PayoutContext, eventId: string, deposit: Deposit): Promise<"already" | "refused"> {
  const fields = { depositId: deposit.id, merchantId: deposit.merchantId, amount: Number(deposit.amount), currency: deposit.currency, eventId };
  let outcome: "withheld" | "already-withheld" | "credited";
  try {
    outcome = await transactionWithRetry(ctx.db, (trx) => withholdCredit(trx, ctx.clock, { ...fields, processId: deposit.processId, reason: SANDBOX_DEPOSIT_OF_LIVE_MERCHANT }));
  } catch (err) {
    // A racing delivery on another replica inserted it first.
    if (!isUniqueViolation(err)) throw err;
    outcome = "already-withheld";
  }
  if (outcome === "credited") return "already";
  // An error, not a warning: money the deposit service completed is in no balance until an
  // operator decides (`pnpm cli withheld-credit list`); logged once, when recorded.
  if (outcome === "withheld") ctx.logger.error(fields, "sandbox deposit not credited: its merchant is live; withheld for an operator");
  return "refused";
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
