import { Code } from "@connectrpc/connect";
import type { CreateWithdrawalRequest, PayoutService } from "@payments/contracts/payout";
import { checkModeFence, errorInfo, isUniqueViolation, newId, parseRequest, RefreshMerchant, serviceError, SettledMerchants, transactionWithRetry, type Rpc } from "@payments/kit";
import { callerAttribution, currentMerchantKey, type MerchantVoice } from "@payments/access";
import type { Merchant } from "@payments/contracts/merchant";
import { z } from "zod";
import { requireKnownBank } from "../bank-list.js";
import type { PayoutContext } from "../context.js";
import { post } from "../ledger.js";
import { requireMerchant } from "../merchants.js";
import { amount, currency, iban, merchantId, processId, text, turkishIbanProblem } from "../requests.js";
import { findWithdrawalRow, withdrawalFromRow, type WithdrawalRow } from "../store.js";
import { approvalAtCreation } from "../withdrawal-approval.js";

function duplicate(existing: Pick<WithdrawalRow, "id" | "process_id">) {
  return serviceError(Code.AlreadyExists, "DUPLICATE_TRANSACTION", `a withdrawal with processId ${JSON.stringify(existing.process_id)} already exists`, {
    field: "process_id",
    details: { transactionId: existing.id },
  });
}

function requestSchema(ctx: PayoutContext) {
  return z.object({
    merchantId,
    processId,
    amount,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    bankId: z.string().max(40, "must be at most 40 characters"),
    accountName: text(),
    iban,
    userId: text(),
    userName: text(),
    name: text(),
  });
}
const schemas = new WeakMap<PayoutContext, ReturnType<typeof requestSchema>>();

/** The handler's own check of a request (fields, then a Turkish IBAN), also run before a request is stored for a second person's approval. */
export function parseCreateWithdrawal(ctx: PayoutContext, req: CreateWithdrawalRequest) {
  let schema = schemas.get(ctx);
  if (!schema) schemas.set(ctx, (schema = requestSchema(ctx)));
  const input = parseRequest(schema, req);
  const ibanProblem = turkishIbanProblem(input.iban);
  if (ibanProblem) throw serviceError(Code.InvalidArgument, "INVALID_IBAN", `iban: ${ibanProblem}`, { field: "iban" });
  return input;
}

type Input = ReturnType<typeof parseCreateWithdrawal>;

/** The new row, every column set (the row as inserted is the row stored); its kind and approval are set again in the transaction, from the merchant it settles on. */
function newWithdrawalRow(input: Input, now: number, sandbox: boolean, key: MerchantVoice | undefined): WithdrawalRow {
  return {
    id: newId("wdr"),
    merchant_id: input.merchantId,
    process_id: input.processId,
    status: "pending",
    amount: input.amount,
    currency: input.currency,
    bank_id: input.bankId,
    account_name: input.accountName,
    iban: input.iban,
    user_id: input.userId,
    user_name: input.userName,
    name: input.name,
    failure_reason: null,
    sequence: 1,
    dispatched_at: null,
    dispatch_attempts: 0,
    bank_reference: null,
    awaiting_operator: false,
    sandbox,
    created_at: now,
    updated_at: now,
    completed_at: null,
    // Who asks, in words: the gateway for a merchant's API key, or a person and the workload
    // that carried them (a merchant user's own four-eyes ran in the access layer before this).
    created_by: callerAttribution("payout").slice(0, 500),
    api_key_id: key?.keyId ?? null,
    approval: null,
    approval_expires_at: null,
    approval_decided_by: null,
    approval_decided_at: null,
    approval_note: null,
  };
}

/**
 * Inside the creation's transaction, with the merchant as it now stands: its kind (the
 * connector, for good) and the merchant's four-eyes on its API keys: above its threshold the
 * withdrawal is held like any other but waits for a second person of the merchant before the
 * worker sends it (src/withdrawal-approval.ts). The threshold is the merchant cache's, which the
 * threshold's change drops (MerchantChanged) as a switch of kind does.
 */
function settleOnMerchant(ctx: PayoutContext, row: WithdrawalRow, merchant: Merchant, key: MerchantVoice | undefined): void {
  row.sandbox = merchant.sandbox;
  row.approval = approvalAtCreation({ key, threshold: merchant.withdrawalApprovalThreshold, amount: row.amount });
  row.approval_expires_at = row.approval === "awaiting" ? Number(row.created_at) + ctx.config.WITHDRAWAL_APPROVAL_TTL : null;
}

function logCreated(ctx: PayoutContext, row: WithdrawalRow): void {
  const fields = { withdrawalId: row.id, merchantId: row.merchant_id, amount: row.amount, currency: row.currency, bankId: row.bank_id || undefined, sandbox: Boolean(row.sandbox), apiKeyId: row.api_key_id ?? undefined };
  if (row.approval === "awaiting") ctx.logger.info(fields, "withdrawal created; above the merchant's approval threshold, it waits for a second person of the merchant");
  else if (row.approval === "trusted_key") ctx.logger.info(fields, "withdrawal created above the merchant's approval threshold without approval: the API key is trusted for automatic payouts");
  else ctx.logger.info(fields, "withdrawal created");
}

export function createWithdrawal(ctx: PayoutContext): Rpc<typeof PayoutService, "createWithdrawal"> {
  // Merchants with a withdrawal here: no switch can succeed for them, so no fence read (kit mode-fence.ts).
  const settled = new SettledMerchants();

  return {
    async createWithdrawal(req) {
      const input = parseCreateWithdrawal(ctx, req);

      // A repeated request is answered before anything else about it is judged (and
      // before the bank catalog is asked anything).
      const processKey = { merchantId: input.merchantId, processId: input.processId };
      const existing = await findWithdrawalRow(ctx.db, processKey);
      if (existing) throw duplicate(existing);
      // The merchant's kind now decides, for good, which connector the withdrawal goes to. For
      // an API key's withdrawal the merchant's approval threshold decides too (whether it waits,
      // or goes marked as a trusted key's), so the merchant is asked afresh, as the access layer
      // does for a person's withdrawal: a threshold its owner set a moment ago applies though its
      // MerchantChanged has not reached this replica's cache yet (issue 32; one GetMerchant per
      // API withdrawal).
      const key = currentMerchantKey();
      let fresh = key !== undefined;
      let merchant = await requireMerchant(ctx, input.merchantId, { fresh });
      if (input.bankId !== "") await requireKnownBank(ctx, input.bankId);

      const row = newWithdrawalRow(input, ctx.clock.now().getTime(), merchant.sandbox, key);
      try {
        // The mode fence first (a shared lock on the merchant's fence row, kit
        // src/mode-fence.ts): refused while the merchant switches between sandbox and live; a
        // cached kind that may be stale is asked afresh (retryOn) and the attempt runs again.
        // Then the hold: every creation for this merchant and currency then queues on the
        // balance row, so a racing duplicate waits for its twin's commit and then meets the
        // unique (merchant_id, process_id) index. The first holds of a merchant without a
        // balance row can still deadlock on that row's insert (InnoDB's insert intention
        // locks); the loser is rolled back whole and simply runs again.
        await transactionWithRetry(
          ctx.db,
          async (trx) => {
            if (!settled.has(row.merchant_id)) {
              const fence = await checkModeFence(trx, { merchantId: row.merchant_id, sandbox: merchant.sandbox, fresh, now: ctx.clock.now().getTime() });
              if (fence === "refresh") throw new RefreshMerchant(row.merchant_id);
            }
            settleOnMerchant(ctx, row, merchant, key);
            const hold = await post(trx, ctx.clock, {
              merchantId: row.merchant_id,
              currency: row.currency,
              kind: "withdrawal_hold",
              availableDelta: -row.amount,
              heldDelta: row.amount,
              transactionId: row.id,
              actor: row.created_by ?? undefined,
            });
            if (!hold) throw new Error(`withdrawal ${row.id} already has a hold`);
            await trx("withdrawals").insert(row);
          },
          {
            retryOn: async (err) => {
              if (!(err instanceof RefreshMerchant) || fresh) return false;
              ctx.merchantCache.invalidate(row.merchant_id);
              fresh = true;
              merchant = await requireMerchant(ctx, row.merchant_id, { fresh });
              return true;
            },
          },
        );
      } catch (err) {
        // A twin that committed first makes this a duplicate, whatever else failed (the
        // unique index, or the balance its hold just took).
        if (isUniqueViolation(err) || ["INSUFFICIENT_BALANCE", "MERCHANT_MODE_CHANGING"].includes(errorInfo(err).reason ?? "")) {
          const raced = await findWithdrawalRow(ctx.db, processKey);
          if (raced) throw duplicate(raced);
        }
        throw err;
      }
      settled.add(row.merchant_id);
      logCreated(ctx, row);
      return { withdrawal: withdrawalFromRow(row) };
    },
  };
}
