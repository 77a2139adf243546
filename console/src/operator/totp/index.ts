import { findOperatorById, updateOperator, type Operator } from "../../identity/operators.js";
import { OPERATOR_SESSIONS } from "../../identity/sessions.js";
import { totpRequiredFor } from "../../identity/sign-in.js";
import { totpRoutes, type TotpPagesSide } from "../../identity/totp-pages.js";
import type { ConsoleContext } from "../../context.js";
import type { ConsoleRoute } from "../../route.js";
import { text } from "../texts/index.js";
import { renderPage } from "../layout.js";

/** The operators' side: `/totp`, reachable before a required enrolment; no removal (an admin's reset clears it). */
export const OPERATOR_TOTP: TotpPagesSide<Operator> = {
  path: "/totp",
  access: "enrolling",
  sessions: OPERATOR_SESSIONS,
  signedIn: (ctx) => ({ session: ctx.state.session, account: ctx.state.operator }),
  text,
  render: (ctx, page, status) => {
    const { operator, session } = ctx.state;
    renderPage(ctx, { ...page, ...(operator && session ? { operator, csrfToken: session.csrfToken } : {}) }, status);
  },
  required: (deps, operator) => totpRequiredFor(deps, operator),
  findById: findOperatorById,
  setTotp: (trx, id, patch) => updateOperator(trx, id, patch),
  afterEnrolment: "/",
  eventOwner: (operator) => ({ operatorId: operator.id }),
};

/** GET/POST /totp: an operator's enrolment. */
export function totpPages(deps: ConsoleContext): ConsoleRoute[] {
  return totpRoutes(deps, OPERATOR_TOTP);
}
