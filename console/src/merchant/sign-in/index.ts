import { findMerchantUserById, updateMerchantUser } from "../../auth/merchant-users.js";
import { signInMerchantUser } from "../../auth/merchant-sign-in.js";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem } from "../../auth/password.js";
import { createSession, deleteSession, deleteSessionsOf, MERCHANT_SESSIONS } from "../../auth/sessions.js";
import { recordSignInEvent } from "../../auth/sign-in-events.js";
import { consumeSignInLink, MERCHANT_LINKS, peekSignInLink } from "../../auth/sign-in-links.js";
import type { SignInRefusal } from "../../auth/sign-in.js";
import { clearCookie, merchantSessionCookieName, setCookie } from "../../cookies.js";
import { nowMs, type ConsoleContext } from "../../context.js";
import { html } from "../../html.js";
import { alert, field, notice } from "../../layout.js";
import { preSessionToken } from "../../middleware/csrf.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { common } from "../common/texts.js";
import { renderMerchantLayout } from "../layout.js";

type CommonKey = Parameters<typeof common>[1];

const NOTICES: Record<string, CommonKey> = { password: "signIn.passwordSet", signed_out: "signIn.signedOut" };

const REFUSALS: Record<SignInRefusal, CommonKey> = {
  invalid: "signIn.invalid",
  throttled: "signIn.throttled",
  totp_required: "signIn.totpRequired",
  totp_invalid: "signIn.totpInvalid",
  totp_enrolment_required: "signIn.invalid",
};

function signInPage(deps: ConsoleContext, ctx: ConsoleContextKoa, form: { email?: string; error?: { reason: SignInRefusal; retryAfterMs?: number | undefined } }, status = 200): void {
  const lang = ctx.state.lang;
  const t = (key: CommonKey, params?: Record<string, string | number>) => common(lang, key, params);
  const error = form.error;
  const message = error ? t(REFUSALS[error.reason], { minutes: Math.max(1, Math.ceil((error.retryAfterMs ?? 0) / 60_000)) }) : undefined;
  const totpError = error && (error.reason === "totp_required" || error.reason === "totp_invalid") ? message : undefined;
  const done = typeof ctx.query.done === "string" ? NOTICES[ctx.query.done] : undefined;
  renderMerchantLayout(
    ctx,
    {
      title: t("signIn.title"),
      body: html`${notice(done ? t(done) : undefined)}${alert(totpError ? undefined : message)}
<form method="post" action="/merchant/sign-in" class="card" novalidate>
<input type="hidden" name="_csrf" value="${preSessionToken(ctx, deps.secureCookies)}">
${field({ name: "email", label: t("signIn.email"), type: "email", value: form.email ?? "", autocomplete: "username", required: true })}
${field({ name: "password", label: t("signIn.password"), type: "password", autocomplete: "current-password", required: true })}
${field({ name: "totp", label: t("signIn.totp"), hint: t("signIn.totpHint"), autocomplete: "one-time-code", inputmode: "numeric", error: totpError })}
<button type="submit">${t("signIn.submit")}</button>
</form>`,
    },
    status,
  );
}

function invalidLinkPage(ctx: ConsoleContextKoa): void {
  const lang = ctx.state.lang;
  renderMerchantLayout(ctx, { title: common(lang, "setPassword.title"), body: html`${alert(common(lang, "setPassword.invalidLink"))}` }, 410);
}

function passwordPage(deps: ConsoleContext, ctx: ConsoleContextKoa, token: string, email: string, errors: { password?: string; confirm?: string } = {}, status = 200): void {
  const lang = ctx.state.lang;
  const t = (key: CommonKey, params?: Record<string, string | number>) => common(lang, key, params);
  renderMerchantLayout(
    ctx,
    {
      title: t("setPassword.title"),
      body: html`${alert(errors.password ?? errors.confirm ? t("error.summary") : undefined)}
<p>${t("setPassword.intro", { min: MIN_PASSWORD_LENGTH, email })}</p>
<form method="post" action="/merchant/set-password" class="card" novalidate>
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

/**
 * The merchant dashboard's own sign-in, sign-out and set-password pages (`/merchant/...`): the
 * operators' ones never sign a merchant user in, nor these an operator. A one-time link is used up
 * by the successful submission only, in the transaction that stores the hash; every session of
 * the user ends with it.
 */
export function merchantSignInPages(deps: ConsoleContext): ConsoleRoute[] {
  const cookie = merchantSessionCookieName(deps.secureCookies);
  return [
    {
      method: "GET",
      path: "/merchant/sign-in",
      access: "merchant-public",
      handler: (ctx) => {
        if (ctx.state.merchantUser) return ctx.redirect("/merchant");
        signInPage(deps, ctx, {});
      },
    },
    {
      method: "POST",
      path: "/merchant/sign-in",
      access: "merchant-public",
      handler: async (ctx) => {
        const form = ctx.state.form ?? {};
        const email = (form.email ?? "").slice(0, 254);
        const result = await signInMerchantUser(deps, { email, password: form.password ?? "", totp: form.totp || undefined, ip: ctx.state.clientIp });
        if (!result.ok) {
          if (result.retryAfterMs !== undefined) ctx.set("Retry-After", String(Math.ceil(result.retryAfterMs / 1000)));
          return signInPage(deps, ctx, { email, error: { reason: result.reason, retryAfterMs: result.retryAfterMs } }, result.reason === "throttled" ? 429 : 401);
        }
        // A new session id at every sign-in: whatever id the browser held before (fixation) is dropped.
        if (ctx.state.merchantSession) await deleteSession(deps.db, ctx.state.merchantSession.idHash, MERCHANT_SESSIONS);
        const { secret } = await createSession(deps.db, { operatorId: result.account.id, channel: "browser", now: nowMs(deps), limits: deps.limits }, MERCHANT_SESSIONS);
        setCookie(ctx, cookie, secret, { secure: deps.secureCookies });
        ctx.status = 303;
        ctx.redirect("/merchant");
      },
    },
    {
      method: "POST",
      path: "/merchant/sign-out",
      access: "merchant",
      handler: async (ctx) => {
        const { merchantSession: session, merchantUser: user } = ctx.state;
        if (session) await deleteSession(deps.db, session.idHash, MERCHANT_SESSIONS);
        if (user) await recordSignInEvent(deps.db, { event: "sign_out", channel: "browser", email: user.email, merchantUserId: user.id, ip: ctx.state.clientIp }, nowMs(deps));
        clearCookie(ctx, cookie, deps.secureCookies);
        ctx.status = 303;
        ctx.redirect("/merchant/sign-in?done=signed_out");
      },
    },
    {
      method: "GET",
      path: "/merchant/set-password",
      access: "merchant-public",
      handler: async (ctx) => {
        const token = typeof ctx.query.token === "string" ? ctx.query.token : "";
        const link = token ? await peekSignInLink(deps.db, token, nowMs(deps), MERCHANT_LINKS) : undefined;
        const user = link ? await findMerchantUserById(deps.db, link.operatorId) : undefined;
        if (!link || !user || user.disabled) return invalidLinkPage(ctx);
        passwordPage(deps, ctx, token, user.email);
      },
    },
    {
      method: "POST",
      path: "/merchant/set-password",
      access: "merchant-public",
      handler: async (ctx) => {
        const form = ctx.state.form ?? {};
        const token = form.token ?? "";
        const password = form.password ?? "";
        const link = token ? await peekSignInLink(deps.db, token, nowMs(deps), MERCHANT_LINKS) : undefined;
        const user = link ? await findMerchantUserById(deps.db, link.operatorId) : undefined;
        if (!link || !user || user.disabled) return invalidLinkPage(ctx);
        const lang = ctx.state.lang;
        const problem = passwordProblem(password);
        if (problem) {
          const message = problem === "too_short" ? common(lang, "setPassword.tooShort", { min: MIN_PASSWORD_LENGTH }) : common(lang, "setPassword.tooLong", { max: MAX_PASSWORD_LENGTH });
          return passwordPage(deps, ctx, token, user.email, { password: message }, 400);
        }
        if (password !== (form.confirm ?? "")) return passwordPage(deps, ctx, token, user.email, { confirm: common(lang, "setPassword.mismatch") }, 400);
        // Hashed before the transaction: scrypt's ~100 ms must not hold SQLite's write lock.
        const passwordHash = await hashPassword(password);
        const now = nowMs(deps);
        const used = await deps.db.transaction(async (trx) => {
          const consumed = await consumeSignInLink(trx, token, now, MERCHANT_LINKS);
          if (!consumed || consumed.operatorId !== user.id) return false;
          await updateMerchantUser(trx, user.id, { passwordHash });
          await deleteSessionsOf(trx, user.id, MERCHANT_SESSIONS);
          return true;
        });
        if (!used) return invalidLinkPage(ctx);
        await recordSignInEvent(deps.db, { event: "password_set", channel: "browser", email: user.email, merchantUserId: user.id, ip: ctx.state.clientIp, reason: link.purpose }, now);
        ctx.status = 303;
        ctx.redirect("/merchant/sign-in?done=password");
      },
    },
  ];
}
