import type { DepositService } from "@payments/contracts/deposit";
import { randomInt } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { checkModeFence, errorInfo, isUniqueViolation, newId, newToken, parseRequest, RefreshMerchant, serviceError, SettledMerchants, transactionWithRetry, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { checkAmountInRange, fetchDepositTerms, requireReceivingAccount, type DepositTerms } from "../deposit-terms.js";
import { lookupMerchant, requireActive, type MerchantFacts } from "../merchant-lookup.js";
import { newReference } from "../reference.js";
import { amount, currency, merchantId, metadataJson, processId, text } from "../requests.js";
import { requireSecureUnlessSandbox, returnUrlInput } from "../return-url.js";
import { depositFromRow, findDepositRow, type DepositRow } from "../store.js";

function duplicate(existing: Pick<DepositRow, "id" | "process_id">) {
  return serviceError(Code.AlreadyExists, "DUPLICATE_TRANSACTION", `a deposit with processId ${JSON.stringify(existing.process_id)} already exists`, {
    field: "process_id",
    details: { transactionId: existing.id },
  });
}

/**
 * Deposits take the candidate accounts in turn (per process, from a random start), so
 * pending deposits spread evenly and two of one amount rarely share an account, which keeps
 * amount matching unambiguous. It used to count every pending deposit of every candidate on
 * each creation, a query that grew with the backlog; the turn costs nothing.
 */
function accountRotation(): (terms: DepositTerms) => DepositTerms["accounts"][number] {
  let turn = randomInt(1_000_000);
  return (terms) => {
    const account = terms.accounts[turn++ % terms.accounts.length];
    if (!account) throw new Error("a deposit needs at least one candidate account");
    return account;
  };
}

export function createDeposit(ctx: DepositContext): Rpc<typeof DepositService, "createDeposit"> {
  const chooseAccount = accountRotation();
  const request = z.object({
    merchantId,
    processId,
    amount,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    bankId: z.string().max(40, "must be at most 40 characters"),
    customer: z.object(
      { id: text(), name: text(), username: text() },
      { error: (issue) => (issue.input === undefined ? "is required" : "must be an object") },
    ),
    metadataJson,
    returnUrl: returnUrlInput,
  });

  /**
   * The merchant (cached unless `fresh`), the terms of its kind and the account: everything
   * judged before the insert. A repeated request is answered as a duplicate whatever else is
   * wrong with it now; the unique index finds duplicates on the way in, so only a refusal
   * looks for one.
   */
  async function prepare(input: z.infer<typeof request>, fresh: boolean): Promise<{ merchant: MerchantFacts; terms: DepositTerms }> {
    try {
      // Both come from caches their services keep current; the terms depend on the
      // merchant's kind (sandbox or live), so on a miss the two asks go one after the other.
      const merchant = await lookupMerchant(ctx, input.merchantId, { fresh });
      requireActive(merchant);
      requireSecureUnlessSandbox(input.returnUrl, merchant.sandbox);
      const terms = await fetchDepositTerms(ctx, input.merchantId, input.bankId, merchant.sandbox);
      checkAmountInRange(input.amount, input.currency, terms);
      requireReceivingAccount(terms, merchant.sandbox);
      return { merchant, terms };
    } catch (err) {
      const existing = await findDepositRow(ctx.db, { merchantId: input.merchantId, processId: input.processId });
      if (existing) throw duplicate(existing);
      throw err;
    }
  }

  // Merchants with a deposit here: no switch can succeed for them, so no fence read (kit mode-fence.ts).
  const settled = new SettledMerchants();

  return {
    async createDeposit(req) {
      const input = parseRequest(request, req);
      let fresh = false;
      let { merchant, terms } = await prepare(input, fresh);
      const id = newId("dep");
      // A reference or token collision (about 1 in 10^12 per pair) retries with new ones;
      // a processId collision is a duplicate request that raced this one. The insert reads
      // the merchant's mode fence in its transaction: refused while the merchant switches
      // between sandbox and live, and asked afresh when the cached kind may be stale.
      let row: DepositRow;
      for (let attempt = 1; ; attempt++) {
        const account = chooseAccount(terms);
        const now = ctx.clock.now().getTime();
        row = {
          id,
          merchant_id: input.merchantId,
          process_id: input.processId,
          status: "pending",
          amount: input.amount,
          requested_amount: input.amount,
          currency: input.currency,
          bank_id: terms.bankId,
          account_id: account.id,
          account_bank_id: account.bankId,
          account_bank_name: account.bankName,
          account_name: account.accountName,
          account_iban: account.iban,
          reference: newReference(),
          checkout_token: newToken(24),
          customer_id: input.customer.id,
          customer_name: input.customer.name,
          customer_username: input.customer.username,
          metadata_json: input.metadataJson === "" ? null : input.metadataJson,
          return_url: input.returnUrl?.href ?? null,
          failure_reason: null,
          transfer_id: null,
          sequence: 1,
          sandbox: merchant.sandbox,
          expires_at: now + ctx.config.DEPOSIT_TTL,
          created_at: now,
          updated_at: now,
          completed_at: null,
        };
        const inserting = row;
        const sandbox = merchant.sandbox;
        try {
          if (settled.has(input.merchantId)) {
            await ctx.db("deposits").insert(inserting);
          } else {
            await transactionWithRetry(ctx.db, async (trx) => {
              const fence = await checkModeFence(trx, { merchantId: input.merchantId, sandbox, fresh, now: ctx.clock.now().getTime() });
              if (fence === "refresh") throw new RefreshMerchant(input.merchantId);
              await trx("deposits").insert(inserting);
            });
            settled.add(input.merchantId);
          }
          break;
        } catch (err) {
          if (err instanceof RefreshMerchant && !fresh) {
            ctx.merchantCache.invalidate(input.merchantId);
            fresh = true;
            ({ merchant, terms } = await prepare(input, fresh));
            attempt--;
            continue;
          }
          if (errorInfo(err).reason === "MERCHANT_MODE_CHANGING") {
            const existing = await findDepositRow(ctx.db, { merchantId: input.merchantId, processId: input.processId });
            if (existing) throw duplicate(existing);
            throw err;
          }
          if (!isUniqueViolation(err)) throw err;
          const raced = await findDepositRow(ctx.db, { merchantId: input.merchantId, processId: input.processId });
          if (raced) throw duplicate(raced);
          if (attempt >= 5) throw err;
        }
      }
      ctx.logger.info({ depositId: id, merchantId: input.merchantId, amount: input.amount, bankId: terms.bankId, accountId: row.account_id }, "deposit created");
      // The row as inserted is the row stored: every column is set here.
      return { deposit: depositFromRow(row) };
    },
  };
}
