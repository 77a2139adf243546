import type { ConsoleContext } from "../context.js";
import { findMerchantUserByEmail, updateMerchantUser, type MerchantUser } from "./merchant-users.js";
import { signInWith, type AccountSignInResult } from "./sign-in.js";

/**
 * A merchant user's sign-in (the merchant dashboard's page only: merchant users have no CLI):
 * the same checks as an operator's (one scrypt for an unknown email, TOTP when the user has
 * enrolled, the throttle, every outcome in sign_in_events), against `merchant_users` only. The
 * throttle counts a merchant user's email apart from an operator's of the same address.
 */
export function signInMerchantUser(ctx: ConsoleContext, input: { email: string; password: string; totp?: string | undefined; ip: string }): Promise<AccountSignInResult<MerchantUser>> {
  return signInWith<MerchantUser>(
    ctx,
    { ...input, channel: "browser" },
    {
      find: (email) => findMerchantUserByEmail(ctx.db, email),
      update: (id, patch) => updateMerchantUser(ctx.db, id, patch),
      throttleKey: (email) => `merchant:${email}`,
      eventOwner: (user) => ({ merchantUserId: user.id }),
      cliNeedsEnrolment: () => false,
    },
  );
}
