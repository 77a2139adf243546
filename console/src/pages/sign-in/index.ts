import { findOperatorById, updateOperator, type Operator } from "../../auth/operators.js";
import { OPERATOR_SESSIONS } from "../../auth/sessions.js";
import { signIn, totpRequiredFor } from "../../auth/sign-in.js";
import { OPERATOR_LINKS } from "../../auth/sign-in-links.js";
import { sessionCookieName } from "../../cookies.js";
import type { ConsoleContext } from "../../context.js";
import { text } from "../../i18n.js";
import { renderPage } from "../../layout.js";
import type { ConsoleRoute } from "../../route.js";
import { signInRoutes, type AccountPagesSide } from "./account-pages.js";

/**
 * The operators' side of the sign-in and set-password pages (`/sign-in`, `/sign-out`,
 * `/set-password`): the `operators` table, the operators' sessions, links and cookie. After
 * sign-in an operator who must have TOTP and has none goes to enrolment first.
 */
export const OPERATOR_PAGES: AccountPagesSide<Operator> = {
  paths: { signIn: "/sign-in", signOut: "/sign-out", setPassword: "/set-password" },
  home: "/",
  access: { public: "public", signOut: "enrolling" },
  cookieName: sessionCookieName,
  sessions: OPERATOR_SESSIONS,
  links: OPERATOR_LINKS,
  text,
  render: renderPage,
  signedIn: (ctx) => ({ session: ctx.state.session, account: ctx.state.operator }),
  signIn: async (deps, input) => {
    const result = await signIn(deps, { ...input, channel: "browser" });
    return result.ok ? { ok: true, account: result.operator } : result;
  },
  afterSignIn: (deps, operator) => (operator.totpSecret === null && totpRequiredFor(deps, operator) ? "/totp" : "/"),
  findById: findOperatorById,
  setPasswordHash: (trx, id, passwordHash) => updateOperator(trx, id, { passwordHash }),
  eventOwner: (operator) => ({ operatorId: operator.id }),
};

/** GET/POST /sign-in and POST /sign-out. */
export function signInPages(deps: ConsoleContext): ConsoleRoute[] {
  return signInRoutes(deps, OPERATOR_PAGES);
}
