import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import type { DepositContext } from "./context.js";
import { isFinal } from "./deposit-state.js";
import { lookupMerchant } from "./merchant-lookup.js";
import { checkoutToken } from "./requests.js";
import { findDepositByToken, rowStatus, type DepositRow } from "./store.js";

const NOT_FOUND_MESSAGE = "this checkout link is not valid or has expired";

/**
 * The deposit behind a checkout token. The token opens the payment details while the
 * deposit is pending, then only its outcome for CHECKOUT_KEEP_FINAL; after that, and for
 * anything that is not a token we issued, the answer is the same CHECKOUT_NOT_FOUND, so a
 * probe learns nothing about which tokens exist.
 */
export async function depositForToken(ctx: DepositContext, token: string): Promise<DepositRow> {
  if (!checkoutToken.safeParse(token).success) throw serviceError(Code.NotFound, "CHECKOUT_NOT_FOUND", NOT_FOUND_MESSAGE);
  const row = await findDepositByToken(ctx.db, token);
  if (!row) throw serviceError(Code.NotFound, "CHECKOUT_NOT_FOUND", NOT_FOUND_MESSAGE);
  const finalSince = row.completed_at === null ? undefined : Number(row.completed_at);
  if (isFinal(rowStatus(row)) && finalSince !== undefined && ctx.clock.now().getTime() > finalSince + ctx.config.CHECKOUT_KEEP_FINAL) {
    throw serviceError(Code.NotFound, "CHECKOUT_NOT_FOUND", NOT_FOUND_MESSAGE);
  }
  return row;
}

/**
 * Whom the customer is paying, for the checkout page: the merchant's display name from the
 * merchant cache (GetMerchant on a miss). The page must work without it, so a merchant
 * service that cannot be reached, refuses, or does not answer within
 * CHECKOUT_MERCHANT_TIMEOUT gives "" (the page then names no one) and a warning. A load cut
 * short keeps running and fills the cache for the next view; it must not outlast the
 * gateway's own deadline on GetCheckout, hence the shorter wait.
 */
export async function checkoutMerchantName(ctx: DepositContext, row: Pick<DepositRow, "id" | "merchant_id">): Promise<string> {
  const lookup = lookupMerchant(ctx, row.merchant_id);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timed out">((resolve) => {
    timer = setTimeout(() => resolve("timed out"), ctx.config.CHECKOUT_MERCHANT_TIMEOUT);
  });
  try {
    const outcome = await Promise.race([lookup, timedOut]);
    if (outcome !== "timed out") return outcome.displayName;
    // Still running: its failure, if it comes, is no one's to handle (the next view asks again).
    void lookup.catch(() => undefined);
    ctx.logger.warn(
      { depositId: row.id, merchantId: row.merchant_id, waitedMs: ctx.config.CHECKOUT_MERCHANT_TIMEOUT },
      "checkout without the merchant's name: the merchant service did not answer in time",
    );
  } catch (err) {
    ctx.logger.warn({ depositId: row.id, merchantId: row.merchant_id, err }, "checkout without the merchant's name: the merchant service could not be asked");
  } finally {
    clearTimeout(timer);
  }
  return "";
}
