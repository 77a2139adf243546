import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import type { DepositContext } from "./context.js";
import { isFinal } from "./deposit-state.js";
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
