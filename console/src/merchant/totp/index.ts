import { auditMerchantTotp } from "../../identity/merchant-team.js";
import { findMerchantUserById, updateMerchantUser, type MerchantUser } from "../../identity/merchant-users.js";
import { MERCHANT_SESSIONS } from "../../identity/sessions.js";
import type { ConsoleContext } from "../../context.js";
import { totpRoutes, type TotpPagesSide } from "../../identity/totp-pages.js";
import type { ConsoleRoute } from "../../route.js";
import { merchantPage, signedInMerchant } from "../merchant-call.js";
import { totp } from "./texts.js";

/**
 * /merchant/totp: any signed-in merchant user turns TOTP on for themself (the operators' enrolment
 * page, on the merchant side: the key sealed with CONSOLE_TOTP_KEY, kept on their merchant session
 * until a code confirms it) and off again with a current code. Optional for merchant users; once
 * on, their sign-in asks for the code. Each step, done or refused, is in the merchant's trail.
 */
export function merchantTotpPages(deps: ConsoleContext): ConsoleRoute[] {
  const side: TotpPagesSide<MerchantUser> = {
    path: "/merchant/totp",
    access: "merchant",
    sessions: MERCHANT_SESSIONS,
    signedIn: (ctx) => ({ session: ctx.state.merchantSession, account: ctx.state.merchantUser }),
    text: totp,
    render: (ctx, page, status) => merchantPage(ctx, signedInMerchant(deps, ctx), page, status),
    required: () => false,
    findById: findMerchantUserById,
    setTotp: (trx, id, patch) => updateMerchantUser(trx, id, patch),
    afterEnrolment: "/merchant/totp",
    eventOwner: (user) => ({ merchantUserId: user.id }),
    audit: (ctx, user, change) => auditMerchantTotp(ctx, user, change),
    removal: { text: totp, after: "/merchant/totp?done=removed" },
  };
  return totpRoutes(deps, side);
}
