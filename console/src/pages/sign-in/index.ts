import { signIn, totpRequiredFor, type SignInRefusal } from "../../auth/sign-in.js";
import { createSession, deleteSession } from "../../auth/sessions.js";
import { recordSignInEvent } from "../../auth/sign-in-events.js";
import { clearCookie, sessionCookieName, setCookie } from "../../cookies.js";
import { nowMs, type ConsoleContext } from "../../context.js";
import { preSessionToken } from "../../middleware/csrf.js";
import { html } from "../../html.js";
import { text, type Language, type TextKey } from "../../i18n.js";
import { alert, field, notice, renderPage } from "../../layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";

/** Messages the page shows after a redirect (`?done=…`): a fixed list, never text from the URL. */
const NOTICES: Record<string, TextKey> = { password: "signIn.passwordSet", signed_out: "signIn.signedOut" };

const REFUSALS: Record<SignInRefusal, TextKey> = {
  invalid: "signIn.invalid",
  throttled: "signIn.throttled",
  totp_required: "signIn.totpRequired",
  totp_invalid: "signIn.totpInvalid",
  totp_enrolment_required: "signIn.invalid",
};

interface SignInForm {
  email?: string;
  error?: { reason: SignInRefusal; retryAfterMs?: number | undefined };
}

function signInPage(deps: ConsoleContext, ctx: ConsoleContextKoa, form: SignInForm, status = 200): void {
  const lang: Language = ctx.state.lang;
  const t = (key: TextKey, params?: Record<string, string | number>) => text(lang, key, params);
  const error = form.error;
  const message = error ? t(REFUSALS[error.reason], { minutes: Math.max(1, Math.ceil((error.retryAfterMs ?? 0) / 60_000)) }) : undefined;
  const totpError = error && (error.reason === "totp_required" || error.reason === "totp_invalid") ? message : undefined;
  const done = typeof ctx.query.done === "string" ? NOTICES[ctx.query.done] : undefined;
  renderPage(
    ctx,
    {
      title: t("signIn.title"),
      body: html`${notice(done ? t(done) : undefined)}${alert(totpError ? undefined : message)}
<form method="post" action="/sign-in" class="card" novalidate>
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

/** GET/POST /sign-in and POST /sign-out. */
export function signInPages(deps: ConsoleContext): ConsoleRoute[] {
  const cookie = sessionCookieName(deps.secureCookies);
  return [
    {
      method: "GET",
      path: "/sign-in",
      access: "public",
      handler: (ctx) => {
        if (ctx.state.operator) return ctx.redirect("/");
        signInPage(deps, ctx, {});
      },
    },
    {
      method: "POST",
      path: "/sign-in",
      access: "public",
      handler: async (ctx) => {
        const form = ctx.state.form ?? {};
        const email = (form.email ?? "").slice(0, 254);
        const result = await signIn(deps, { email, password: form.password ?? "", totp: form.totp || undefined, ip: ctx.state.clientIp, channel: "browser" });
        if (!result.ok) {
          if (result.retryAfterMs !== undefined) ctx.set("Retry-After", String(Math.ceil(result.retryAfterMs / 1000)));
          return signInPage(deps, ctx, { email, error: { reason: result.reason, retryAfterMs: result.retryAfterMs } }, result.reason === "throttled" ? 429 : 401);
        }
        // A new session id at every sign-in: whatever id the browser held before (fixation) is dropped.
        if (ctx.state.session) await deleteSession(deps.db, ctx.state.session.idHash);
        const { secret } = await createSession(deps.db, { operatorId: result.operator.id, channel: "browser", now: nowMs(deps), limits: deps.limits });
        setCookie(ctx, cookie, secret, { secure: deps.secureCookies });
        ctx.status = 303;
        ctx.redirect(result.operator.totpSecret === null && totpRequiredFor(deps, result.operator) ? "/totp" : "/");
      },
    },
    {
      method: "POST",
      path: "/sign-out",
      access: "enrolling",
      handler: async (ctx) => {
        const { session, operator } = ctx.state;
        if (session) await deleteSession(deps.db, session.idHash);
        if (operator) await recordSignInEvent(deps.db, { event: "sign_out", channel: "browser", email: operator.email, operatorId: operator.id, ip: ctx.state.clientIp }, nowMs(deps));
        clearCookie(ctx, cookie, deps.secureCookies);
        ctx.status = 303;
        ctx.redirect("/sign-in?done=signed_out");
      },
    },
  ];
}
