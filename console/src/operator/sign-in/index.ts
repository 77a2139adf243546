import { countEnabledAdmins, findOperatorById, updateOperator, type Operator } from "../../identity/operators.js";
import { OPERATOR_SESSIONS } from "../../identity/sessions.js";
import { signIn, totpRequiredFor } from "../../identity/sign-in.js";
import { OPERATOR_LINKS } from "../../identity/sign-in-links.js";
import { sessionCookieName } from "../../cookies.js";
import { nowMs, type ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { text } from "../texts/index.js";
import { renderPage } from "../layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { signInRoutes, type AccountPagesSide } from "../../identity/account-pages.js";

/** How long the sign-in page trusts what it last counted of the enabled admins: a page view costs at most one count this often. */
export const NO_ADMIN_CHECK_MS = 10_000;

const adminCounts = new WeakMap<ConsoleContext, { atMs: number; none: boolean }>();

/** Whether no enabled admin exists yet (the console's bootstrap: the first admin is made at once), counted at most every NO_ADMIN_CHECK_MS. */
async function noAdminYet(deps: ConsoleContext): Promise<boolean> {
  const now = nowMs(deps);
  const held = adminCounts.get(deps);
  if (held && now - held.atMs >= 0 && now - held.atMs < NO_ADMIN_CHECK_MS) return held.none;
  const none = (await countEnabledAdmins(deps.db)) === 0;
  adminCounts.set(deps, { atMs: now, none });
  return none;
}

/** Under the form while no admin exists: the command that makes the first one, and that it prints the link where its password is set. */
async function firstAdminHint(deps: ConsoleContext, ctx: ConsoleContextKoa): Promise<SafeHtml | undefined> {
  if (!(await noAdminYet(deps))) return undefined;
  const lang = ctx.state.lang;
  const [before = "", after = ""] = text(lang, "signIn.firstAdmin").split("{command}");
  return html`<p class="hint" id="first-admin">${before}<code>${text(lang, "signIn.firstAdminCommand")}</code>${after}</p>`;
}

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
  formHint: firstAdminHint,
};

/** GET/POST /sign-in and POST /sign-out. */
export function signInPages(deps: ConsoleContext): ConsoleRoute[] {
  return signInRoutes(deps, OPERATOR_PAGES);
}
