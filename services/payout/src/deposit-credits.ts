import { fromBinary } from "@bufbuild/protobuf";
import { DEPOSIT_COMPLETED_TOPIC } from "@payments/contracts";
import { DepositStatus, DepositStatusChangedSchema, type Deposit } from "@payments/contracts/deposit";
import { isUniqueViolation, readCommitted, sampleConsumerPending, transactionWithRetry, withRequestIdOrNone, type Subscription } from "@payments/kit";
import type { PayoutContext } from "./context.js";
import { merchantOf } from "./merchants.js";
import { isPosted, lockBalances, postedAlready, postLocked, type LedgerPosting } from "./ledger.js";
import { SANDBOX_DEPOSIT_OF_LIVE_MERCHANT, withheldCreditRow, withheldStatuses, type WithheldCreditRow, type WithheldDeposit } from "./withheld-credits.js";

/** The deposit service's subject for completed deposits (under the bus prefix); named in @payments/contracts. */
export { DEPOSIT_COMPLETED_TOPIC };
export const DEPOSIT_CREDITS_CONSUMER = "payout-deposit-credits";

/** The most completed-deposit events credited in one transaction. */
export const DEPOSIT_CREDITS_BATCH = 100;

/**
 * "credited": this call credited it; "already": credited before (or earlier in the same batch),
 * nothing changed; "refused": not credited, its credit withheld (this call recorded it, or an
 * earlier one did).
 */
export type CreditOutcome = "credited" | "already" | "refused";

/** A completed-deposit event as the bus hands it over (a `BatchMessage` is one). */
export interface DepositEventInput {
  data: Uint8Array;
  /** The request id it travelled with, for its log lines. */
  requestId?: string;
}

/** Credits one completed deposit's event: `creditDeposits` with a batch of one. */
export async function creditDeposit(ctx: PayoutContext, data: Uint8Array): Promise<CreditOutcome> {
  const [outcome] = await creditDeposits(ctx, [{ data }]);
  if (!outcome) throw new Error("creditDeposits answered nothing for one event");
  return outcome;
}

interface Completed {
  eventId: string;
  deposit: Deposit;
  requestId?: string;
}

/**
 * Credits completed deposits' amounts to their merchants' available balances, each once, all in
 * one transaction: every event of the batch, or none (a failure throws, and the bus hands the
 * events over again one at a time). A sandbox deposit whose merchant is live is not credited but
 * withheld (src/withheld-credits.ts), once, for an operator to decide. The outcomes are in the
 * order of `events`; a deposit that comes twice is credited once (the second is "already").
 *
 * The transaction runs at READ COMMITTED and first locks the balance rows of every deposit in it
 * (one statement, in (merchant_id, currency) order, as every posting takes them), then reads
 * which deposits already have their deposit_credit entry and which have a withheld record (one
 * query each), then writes: the new withheld records in one insert, the credits as one balance
 * update per (merchant, currency) with the summed amount and one insert of their entries. Every
 * credit and withholding of a deposit (this batch, another replica's racing one, an operator's
 * credit of a withheld record) takes its balance row's lock before it writes, so the reads here
 * see whatever a racing one committed: a repeated or racing delivery credits nothing more, and a
 * deposit is never both credited and withheld. The fixed order keeps batches that share
 * merchants, and withdrawals (one balance row each), from deadlocking. A unique index that still
 * meets a racer (a replica on the per-event code during a deploy, which reads before it locks)
 * runs the transaction again, which then finds the racer's row.
 */
export async function creditDeposits(ctx: PayoutContext, events: readonly DepositEventInput[]): Promise<CreditOutcome[]> {
  const completed = events.map((input): Completed => {
    const event = fromBinary(DepositStatusChangedSchema, input.data);
    const deposit = event.deposit;
    if (!deposit || deposit.status !== DepositStatus.COMPLETED) throw new Error(`event ${event.eventId} is not a completed deposit`);
    return { eventId: event.eventId, deposit, ...(input.requestId ? { requestId: input.requestId } : {}) };
  });
  // The same deposit twice in a batch (a redelivery next to its first delivery): decided once.
  const firsts = new Map<string, Completed>();
  for (const c of completed) if (!firsts.has(c.deposit.id)) firsts.set(c.deposit.id, c);
  const deposits = [...firsts.values()];

  const live = await liveSandboxMerchants(ctx, deposits);

  let uniqueRetries = 0;
  const decided = await transactionWithRetry(
    ctx.db,
    async (trx) => {
      const now = ctx.clock.now().getTime();
      await lockBalances(
        trx,
        deposits.map(({ deposit }) => ({ merchantId: deposit.merchantId, currency: deposit.currency })),
        now,
      );
      const ids = deposits.map(({ deposit }) => deposit.id);
      const credited = await postedAlready(
        trx,
        ids.map((transactionId) => ({ kind: "deposit_credit" as const, transactionId })),
      );
      const withheld = await withheldStatuses(trx, ids);
      const outcomes = new Map<string, CreditOutcome>();
      const records: WithheldCreditRow[] = [];
      const postings: LedgerPosting[] = [];
      for (const { eventId, deposit } of deposits) {
        if (isPosted(credited, { kind: "deposit_credit", transactionId: deposit.id })) {
          outcomes.set(deposit.id, "already");
        } else if (deposit.sandbox && live.has(deposit.merchantId)) {
          if (!withheld.has(deposit.id)) records.push(withheldCreditRow(withheldDeposit(eventId, deposit), now));
          outcomes.set(deposit.id, "refused");
        } else if (withheld.has(deposit.id) && withheld.get(deposit.id) !== "credited") {
          // A deposit whose credit was withheld (open or dismissed) is the operator's to decide, even
          // when this delivery found its merchant sandbox.
          outcomes.set(deposit.id, "refused");
        } else {
          postings.push({
            merchantId: deposit.merchantId,
            currency: deposit.currency,
            kind: "deposit_credit",
            availableDelta: Number(deposit.amount),
            heldDelta: 0,
            transactionId: deposit.id,
            // Kept for statements: the deposit service has it, and a statement must not ask it per line.
            processId: deposit.processId,
            // Who completed the deposit (the transfer's reporter, or the operator), carried in its event.
            ...(deposit.completedBy ? { actor: deposit.completedBy } : {}),
          });
          outcomes.set(deposit.id, "credited");
        }
      }
      if (records.length > 0) await trx("withheld_credits").insert(records);
      await postLocked(trx, now, postings);
      return { outcomes, withheldNow: new Set(records.map((r) => r.deposit_id)) };
    },
    { config: readCommitted(ctx.db), retryOn: (err) => isUniqueViolation(err) && ++uniqueRetries <= 3 },
  );

  logOutcomes(ctx, deposits, decided.outcomes, decided.withheldNow);
  const seen = new Set<string>();
  return completed.map(({ deposit }) => {
    const outcome = decided.outcomes.get(deposit.id) ?? "already";
    if (seen.has(deposit.id)) return outcome === "credited" ? "already" : outcome;
    seen.add(deposit.id);
    return outcome;
  });
}

/**
 * Of the merchants of the batch's sandbox deposits, those the merchant service says are live:
 * one answer per distinct merchant, asked at once, before the transaction (no call while
 * balance rows are locked), through the merchant cache (src/merchants.ts: dropped on
 * MerchantChanged, and after MERCHANT_CACHE_TTL). Sandbox money (simulated payments, made-up
 * accounts) must never become a live balance, which a live connector would pay out for real.
 *
 * A cached answer is as safe here as a fresh one: a merchant's switch between sandbox and live
 * is fenced (kit src/mode-fence.ts, issue 21). RaiseModeFence in the deposit service reads,
 * under the exclusive lock of the merchant's fence row, whether the merchant has a deposit, and
 * any deposit refuses the switch; every CreateDeposit reads that row under a shared lock in the
 * transaction that inserts the deposit. So once a merchant has a deposit (each deposit here is
 * one) its kind never changes again, and what was true of it when it was cached is still true.
 * A switch of a merchant without deposits publishes MerchantChanged, which drops its entry; a
 * merchant changed by hand in the database is caught within the cache's TTL. Asking afresh per
 * deposit (it was a GetMerchant RPC and a query per deposit) was half the status change's
 * calls between services for data that never changes once it matters (issue 22).
 */
async function liveSandboxMerchants(ctx: PayoutContext, deposits: readonly Completed[]): Promise<Set<string>> {
  const merchantIds = [...new Set(deposits.filter(({ deposit }) => deposit.sandbox).map(({ deposit }) => deposit.merchantId))];
  const answers = await Promise.all(merchantIds.map((merchantId) => merchantOf(ctx, merchantId)));
  return new Set(answers.filter((merchant) => !merchant.sandbox).map((merchant) => merchant.id));
}

function withheldDeposit(eventId: string, deposit: Deposit): WithheldDeposit {
  return {
    depositId: deposit.id,
    merchantId: deposit.merchantId,
    processId: deposit.processId,
    amount: Number(deposit.amount),
    currency: deposit.currency,
    eventId,
    reason: SANDBOX_DEPOSIT_OF_LIVE_MERCHANT,
  };
}

/**
 * One info line per batch that credited something; each credit at debug level, each new
 * withholding as an error (money the deposit service completed is in no balance until an operator
 * decides, `pnpm cli withheld-credit list`; logged once, when recorded), under its event's request id.
 */
function logOutcomes(ctx: PayoutContext, deposits: readonly Completed[], outcomes: ReadonlyMap<string, CreditOutcome>, withheldNow: ReadonlySet<string>): void {
  let count = 0;
  for (const { eventId, deposit, requestId } of deposits) {
    const fields = { depositId: deposit.id, merchantId: deposit.merchantId, amount: Number(deposit.amount), currency: deposit.currency };
    if (withheldNow.has(deposit.id)) {
      withRequestIdOrNone(requestId, () => ctx.logger.error({ ...fields, eventId }, "sandbox deposit not credited: its merchant is live; withheld for an operator"));
    } else if (outcomes.get(deposit.id) === "credited") {
      count += 1;
      if (ctx.logger.isLevelEnabled("debug")) withRequestIdOrNone(requestId, () => ctx.logger.debug(fields, "deposit credited"));
    }
  }
  if (count > 0) ctx.logger.info({ credited: count, deposits: deposits.length }, "deposits credited");
}

export async function startDepositCredits(ctx: PayoutContext): Promise<Subscription> {
  const stopSampling = sampleConsumerPending(ctx.metrics, ctx.bus, [DEPOSIT_CREDITS_CONSUMER]);
  const subscription = await ctx.bus.consumeBatches(
    DEPOSIT_CREDITS_CONSUMER,
    [DEPOSIT_COMPLETED_TOPIC],
    async (messages) => {
      await creditDeposits(ctx, messages);
    },
    { maxBatch: DEPOSIT_CREDITS_BATCH },
  );
  return {
    async stop() {
      stopSampling();
      await subscription.stop();
    },
  };
}
