import type { Knex } from "knex";
import type { AccountSignInResult, SignInRefusal } from "./sign-in.js";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem } from "./password.js";
import { createSession, deleteSession, deleteSessionsOf, type Session, type SessionStore } from "./sessions.js";
import { recordSignInEvent } from "./sign-in-events.js";
import { consumeSignInLink, peekSignInLink, type LinkPurpose, type LinkStore } from "./sign-in-links.js";
import { clearCookie, setCookie } from "../cookies.js";
import { nowMs, type ConsoleContext } from "../context.js";
import { html, type SafeHtml } from "../shared/html.js";
import type { Language } from "../shared/i18n.js";
import { alert, field, notice } from "../shared/layout.js";
import { preSessionToken } from "../middleware/csrf.js";
import type { ConsoleRoute, RouteAccess } from "../route.js";
import type { ConsoleContextKoa } from "../state.js";

/** The texts the sign-in and set-password pages show: each side (operators, merchant users) words them its own way. */
export type AccountPageKey =
  | "signIn.title"
  | "signIn.email"
  | "signIn.password"
  | "signIn.totp"
  | "signIn.totpHint"
  | "signIn.submit"
  | "signIn.invalid"
  | "signIn.throttled"
  | "signIn.totpRequired"
  | "signIn.totpInvalid"
  | "signIn.passwordSet"
  | "signIn.signedOut"
  | "setPassword.title"
  | "setPassword.intro"
  | "setPassword.password"
  | "setPassword.confirm"
  | "setPassword.submit"
  | "setPassword.invalidLink"
  | "setPassword.tooShort"
  | "setPassword.tooLong"
  | "setPassword.mismatch"
  | "error.summary";

/** What these pages need of an account, an operator or a merchant user. */
export interface PageAccount {
  id: string;
  email: string;
  disabled: boolean;
}

/**
 * One side of the console's sign-in, sign-out and set-password pages. The operators' and the
 * merchant users' pages take the same steps; everything that keeps the two apart (paths, access,
 * cookie, session and link tables, the account table and its sign-in, texts and layout) comes
 * from here, so an account of one side is never signed in, nor its password set, by the other's.
 */
export interface AccountPagesSide<A extends PageAccount> {
  /** The sign-in, sign-out and set-password paths. */
  paths: { signIn: string; signOut: string; setPassword: string };
  /** Where a browser that is already signed in goes from the sign-in page. */
  home: string;
  /** The access of the pages before sign-in, and of sign-out. */
  access: { public: RouteAccess; signOut: RouteAccess };
  cookieName(secure: boolean): string;
  sessions: SessionStore;
  links: LinkStore;
  text(lang: Language, key: AccountPageKey, params?: Record<string, string | number>): string;
  render(ctx: ConsoleContextKoa, page: { title: string; body: SafeHtml }, status: number): void;
  /** The request's signed-in session and account of this side (none of the other side's). */
  signedIn(ctx: ConsoleContextKoa): { session?: Session | undefined; account?: A | undefined };
  signIn(deps: ConsoleContext, input: { email: string; password: string; totp?: string | undefined; ip: string }): Promise<AccountSignInResult<A>>;
  /** Where a browser goes after a successful sign-in. */
  afterSignIn(deps: ConsoleContext, account: A): string;
  findById(db: Knex, id: string): Promise<A | undefined>;
  setPasswordHash(trx: Knex, id: string, passwordHash: string): Promise<void>;
  /** Which account a sign-in event names. */
  eventOwner(account: A): { operatorId: string } | { merchantUserId: string };
  /** A line under the sign-in form, when the side has something to say before anyone can sign in (how the first account is made). */
  formHint?(deps: ConsoleContext, ctx: ConsoleContextKoa): Promise<SafeHtml | undefined>;
}

/** A side's sign-in, sign-out and set-password paths under `home` (`/` or `/merchant`), and its home. */
export function pagesUnder(home: string): Pick<AccountPagesSide<PageAccount>, "paths" | "home"> {
  const prefix = home === "/" ? "" : home;
  return { paths: { signIn: `${prefix}/sign-in`, signOut: `${prefix}/sign-out`, setPassword: `${prefix}/set-password` }, home };
}

/** Messages the page shows after a redirect (`?done=…`): a fixed list, never text from the URL. */
const NOTICES: Record<string, AccountPageKey> = { password: "signIn.passwordSet", signed_out: "signIn.signedOut" };

const REFUSALS: Record<SignInRefusal, AccountPageKey> = {
  invalid: "signIn.invalid",
  throttled: "signIn.throttled",
  totp_required: "signIn.totpRequired",
  totp_invalid: "signIn.totpInvalid",
  totp_enrolment_required: "signIn.invalid",
};

interface SignInForm {
  email?: string;
  error?: { reason: SignInRefusal; retryAfterMs?: number | undefined };
  /** The side's formHint, shown under the form. */
  hint?: SafeHtml | undefined;
}

function signInPage<A extends PageAccount>(deps: ConsoleContext, side: AccountPagesSide<A>, ctx: ConsoleContextKoa, form: SignInForm, status = 200): void {
  const lang = ctx.state.lang;
  const t = (key: AccountPageKey, params?: Record<string, string | number>) => side.text(lang, key, params);
  const error = form.error;
  const message = error ? t(REFUSALS[error.reason], { minutes: Math.max(1, Math.ceil((error.retryAfterMs ?? 0) / 60_000)) }) : undefined;
  const totpError = error && (error.reason === "totp_required" || error.reason === "totp_invalid") ? message : undefined;
  const done = typeof ctx.query.done === "string" ? NOTICES[ctx.query.done] : undefined;
  side.render(
    ctx,
    {
      title: t("signIn.title"),
      body: html`${notice(done ? t(done) : undefined)}${alert(totpError ? undefined : message)}
<form method="post" action="${side.paths.signIn}" class="card" novalidate>
<input type="hidden" name="_csrf" value="${preSessionToken(ctx, deps.secureCookies)}">
${field({ name: "email", label: t("signIn.email"), type: "email", value: form.email ?? "", autocomplete: "username", required: true })}
${field({ name: "password", label: t("signIn.password"), type: "password", autocomplete: "current-password", required: true })}
${field({ name: "totp", label: t("signIn.totp"), hint: t("signIn.totpHint"), autocomplete: "one-time-code", inputmode: "numeric", error: totpError })}
<button type="submit">${t("signIn.submit")}</button>
</form>${form.hint ?? null}`,
    },
    status,
  );
}

/** GET/POST sign-in and POST sign-out of one side. A new session id at every sign-in. */
export function signInRoutes<A extends PageAccount>(deps: ConsoleContext, side: AccountPagesSide<A>): ConsoleRoute[] {
  const cookie = side.cookieName(deps.secureCookies);
  return [
    {
      method: "GET",
      path: side.paths.signIn,
      access: side.access.public,
      handler: async (ctx) => {
        if (side.signedIn(ctx).account) return ctx.redirect(side.home);
        signInPage(deps, side, ctx, { hint: await side.formHint?.(deps, ctx) });
      },
    },
    {
      method: "POST",
      path: side.paths.signIn,
      access: side.access.public,
      handler: async (ctx) => {
        const form = ctx.state.form ?? {};
        const email = (form.email ?? "").slice(0, 254);
        const result = await side.signIn(deps, { email, password: form.password ?? "", totp: form.totp || undefined, ip: ctx.state.clientIp });
        if (!result.ok) {
          if (result.retryAfterMs !== undefined) ctx.set("Retry-After", String(Math.ceil(result.retryAfterMs / 1000)));
          const hint = await side.formHint?.(deps, ctx);
          return signInPage(deps, side, ctx, { email, error: { reason: result.reason, retryAfterMs: result.retryAfterMs }, hint }, result.reason === "throttled" ? 429 : 401);
        }
        // A new session id at every sign-in: whatever id the browser held before (fixation) is dropped.
        const previous = side.signedIn(ctx).session;
        if (previous) await deleteSession(deps.db, previous.idHash, side.sessions);
        const { secret } = await createSession(deps.db, { operatorId: result.account.id, channel: "browser", now: nowMs(deps), limits: deps.limits }, side.sessions);
        setCookie(ctx, cookie, secret, { secure: deps.secureCookies });
        ctx.status = 303;
        ctx.redirect(side.afterSignIn(deps, result.account));
      },
    },
    {
      method: "POST",
      path: side.paths.signOut,
      access: side.access.signOut,
      handler: async (ctx) => {
        const { session, account } = side.signedIn(ctx);
        if (session) await deleteSession(deps.db, session.idHash, side.sessions);
        if (account) await recordSignInEvent(deps.db, { event: "sign_out", channel: "browser", email: account.email, ...side.eventOwner(account), ip: ctx.state.clientIp }, nowMs(deps));
        clearCookie(ctx, cookie, deps.secureCookies);
        ctx.status = 303;
        ctx.redirect(`${side.paths.signIn}?done=signed_out`);
      },
    },
  ];
}

function invalidLinkPage<A extends PageAccount>(side: AccountPagesSide<A>, ctx: ConsoleContextKoa): void {
  const lang = ctx.state.lang;
  side.render(ctx, { title: side.text(lang, "setPassword.title"), body: html`${alert(side.text(lang, "setPassword.invalidLink"))}` }, 410);
}

interface PasswordErrors {
  password?: string;
  confirm?: string;
}

function passwordPage<A extends PageAccount>(deps: ConsoleContext, side: AccountPagesSide<A>, ctx: ConsoleContextKoa, token: string, email: string, errors: PasswordErrors = {}, status = 200): void {
  const lang = ctx.state.lang;
  const t = (key: AccountPageKey, params?: Record<string, string | number>) => side.text(lang, key, params);
  const summary = errors.password ?? errors.confirm;
  side.render(
    ctx,
    {
      title: t("setPassword.title"),
      body: html`${alert(summary ? t("error.summary") : undefined)}
<p>${t("setPassword.intro", { min: MIN_PASSWORD_LENGTH, email })}</p>
<form method="post" action="${side.paths.setPassword}" class="card" novalidate>
<input type="hidden" name="_csrf" value="${preSessionToken(ctx, deps.secureCookies)}">
<input type="hidden" name="token" value="${token}">
<input type="email" name="email" value="${email}" autocomplete="username" hidden>
${field({ name: "password", label: t("setPassword.password"), type: "password", autocomplete: "new-password", required: true, error: errors.password })}
${field({ name: "confirm", label: t("setPassword.confirm"), type: "password", autocomplete: "new-password", required: true, error: errors.confirm })}
<button type="submit">${t("setPassword.submit")}</button>
</form>`,
    },
    status,
  );
}

/** The live link a token names and its enabled account, or undefined (then the page says the link is not valid). */
async function linkedAccount<A extends PageAccount>(deps: ConsoleContext, side: AccountPagesSide<A>, token: string): Promise<{ link: { purpose: LinkPurpose }; account: A } | undefined> {
  const link = token ? await peekSignInLink(deps.db, token, nowMs(deps), side.links) : undefined;
  const account = link ? await side.findById(deps.db, link.operatorId) : undefined;
  return link && account && !account.disabled ? { link, account } : undefined;
}

/**
 * GET/POST set-password?token=… of one side: where a one-time link (new account or reset) leads.
 * The link is used up by the successful submission only, in the same transaction that stores the
 * hash; every session of the account ends with it.
 */
export function setPasswordRoutes<A extends PageAccount>(deps: ConsoleContext, side: AccountPagesSide<A>): ConsoleRoute[] {
  return [
    {
      method: "GET",
      path: side.paths.setPassword,
      access: side.access.public,
      handler: async (ctx) => {
        const token = typeof ctx.query.token === "string" ? ctx.query.token : "";
        const found = await linkedAccount(deps, side, token);
        if (!found) return invalidLinkPage(side, ctx);
        passwordPage(deps, side, ctx, token, found.account.email);
      },
    },
    {
      method: "POST",
      path: side.paths.setPassword,
      access: side.access.public,
      handler: async (ctx) => {
        const form = ctx.state.form ?? {};
        const token = form.token ?? "";
        const password = form.password ?? "";
        const found = await linkedAccount(deps, side, token);
        if (!found) return invalidLinkPage(side, ctx);
        const { link, account } = found;
        const lang = ctx.state.lang;
        const problem = passwordProblem(password);
        if (problem) {
          const message = problem === "too_short" ? side.text(lang, "setPassword.tooShort", { min: MIN_PASSWORD_LENGTH }) : side.text(lang, "setPassword.tooLong", { max: MAX_PASSWORD_LENGTH });
          return passwordPage(deps, side, ctx, token, account.email, { password: message }, 400);
        }
        if (password !== (form.confirm ?? "")) return passwordPage(deps, side, ctx, token, account.email, { confirm: side.text(lang, "setPassword.mismatch") }, 400);
        // Hashed before the transaction: scrypt's ~100 ms must not hold SQLite's write lock.
        const passwordHash = await hashPassword(password);
        const now = nowMs(deps);
        const used = await deps.db.transaction(async (trx) => {
          const consumed = await consumeSignInLink(trx, token, now, side.links);
          if (!consumed || consumed.operatorId !== account.id) return false;
          await side.setPasswordHash(trx, account.id, passwordHash);
          await deleteSessionsOf(trx, account.id, side.sessions);
          return true;
        });
        if (!used) return invalidLinkPage(side, ctx);
        await recordSignInEvent(deps.db, { event: "password_set", channel: "browser", email: account.email, ...side.eventOwner(account), ip: ctx.state.clientIp, reason: link.purpose }, now);
        ctx.status = 303;
        ctx.redirect(`${side.paths.signIn}?done=password`);
      },
    },
  ];
}
