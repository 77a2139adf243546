import { signInMerchantUser } from "../../identity/merchant-sign-in.js";
import { findMerchantUserById, updateMerchantUser, type MerchantUser } from "../../identity/merchant-users.js";
import { MERCHANT_SESSIONS } from "../../identity/sessions.js";
import { MERCHANT_LINKS } from "../../identity/sign-in-links.js";
import { merchantSessionCookieName } from "../../cookies.js";
import type { ConsoleContext } from "../../context.js";
import { pagesUnder, setPasswordRoutes, signInRoutes, type AccountPagesSide } from "../../identity/account-pages.js";
import type { ConsoleRoute } from "../../route.js";
import { common } from "../common/texts.js";
import { renderMerchantLayout } from "../layout.js";

/**
 * The merchant users' side of the sign-in and set-password pages (`/merchant/...`): the
 * `merchant_users` table, the merchant sessions, links and cookie, the merchant layout. The
 * operators' pages never sign a merchant user in, nor these an operator.
 */
const MERCHANT_PAGES: AccountPagesSide<MerchantUser> = {
  ...pagesUnder("/merchant"),
  access: { public: "merchant-public", signOut: "merchant" },
  cookieName: merchantSessionCookieName,
  sessions: MERCHANT_SESSIONS,
  links: MERCHANT_LINKS,
  text: common,
  render: renderMerchantLayout,
  signedIn: (ctx) => ({ session: ctx.state.merchantSession, account: ctx.state.merchantUser }),
  signIn: signInMerchantUser,
  afterSignIn: () => "/merchant",
  findById: findMerchantUserById,
  setPasswordHash: (trx, id, passwordHash) => updateMerchantUser(trx, id, { passwordHash }),
  eventOwner: (user) => ({ merchantUserId: user.id }),
};

/**
 * The merchant dashboard's own sign-in, sign-out and set-password pages. A one-time link is used
 * up by the successful submission only, in the transaction that stores the hash; every session
 * of the user ends with it.
 */
export function merchantSignInPages(deps: ConsoleContext): ConsoleRoute[] {
  return [...signInRoutes(deps, MERCHANT_PAGES), ...setPasswordRoutes(deps, MERCHANT_PAGES)];
}
