import { findOperatorById, updateOperator } from "../../auth/operators.js";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem } from "../../auth/password.js";
import { deleteSessionsOf } from "../../auth/sessions.js";
import { recordSignInEvent } from "../../auth/sign-in-events.js";
import { consumeSignInLink, peekSignInLink } from "../../auth/sign-in-links.js";
import { nowMs, type ConsoleContext } from "../../context.js";
import { preSessionToken } from "../../middleware/csrf.js";
import { html } from "../../html.js";
import { text, type TextKey } from "../../i18n.js";
import { alert, field, renderPage } from "../../layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";

interface Errors {
  password?: string;
  confirm?: string;
}

function invalidLinkPage(ctx: ConsoleContextKoa): void {
  const lang = ctx.state.lang;
  renderPage(ctx, { title: text(lang, "setPassword.title"), body: html`${alert(text(lang, "setPassword.invalidLink"))}` }, 410);
}

function formPage(deps: ConsoleContext, ctx: ConsoleContextKoa, token: string, email: string, errors: Errors = {}, status = 200): void {
  const lang = ctx.state.lang;
  const t = (key: TextKey, params?: Record<string, string | number>) => text(lang, key, params);
  const summary = errors.password ?? errors.confirm;
  renderPage(
    ctx,
    {
      title: t("setPassword.title"),
      body: html`${alert(summary ? t("error.summary") : undefined)}
<p>${t("setPassword.intro", { min: MIN_PASSWORD_LENGTH, email })}</p>
<form method="post" action="/set-password" class="card" novalidate>
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
 * GET/POST /set-password?token=…: where a one-time link (new account or reset) leads. The link
 * is used up by the successful submission only, in the same transaction that stores the hash;
 * every session of the account ends with it.
 */
export function setPasswordPages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    {
      method: "GET",
      path: "/set-password",
      access: "public",
      handler: async (ctx) => {
        const token = typeof ctx.query.token === "string" ? ctx.query.token : "";
        const link = token ? await peekSignInLink(deps.db, token, nowMs(deps)) : undefined;
        const operator = link ? await findOperatorById(deps.db, link.operatorId) : undefined;
        if (!link || !operator || operator.disabled) return invalidLinkPage(ctx);
        formPage(deps, ctx, token, operator.email);
      },
    },
    {
      method: "POST",
      path: "/set-password",
      access: "public",
      handler: async (ctx) => {
        const form = ctx.state.form ?? {};
        const token = form.token ?? "";
        const password = form.password ?? "";
        const link = token ? await peekSignInLink(deps.db, token, nowMs(deps)) : undefined;
        const operator = link ? await findOperatorById(deps.db, link.operatorId) : undefined;
        if (!link || !operator || operator.disabled) return invalidLinkPage(ctx);
        const lang = ctx.state.lang;
        const problem = passwordProblem(password);
        if (problem) {
          const message = problem === "too_short" ? text(lang, "setPassword.tooShort", { min: MIN_PASSWORD_LENGTH }) : text(lang, "setPassword.tooLong", { max: MAX_PASSWORD_LENGTH });
          return formPage(deps, ctx, token, operator.email, { password: message }, 400);
        }
        if (password !== (form.confirm ?? "")) return formPage(deps, ctx, token, operator.email, { confirm: text(lang, "setPassword.mismatch") }, 400);
        // Hashed before the transaction: scrypt's ~100 ms must not hold SQLite's write lock.
        const passwordHash = await hashPassword(password);
        const now = nowMs(deps);
        const used = await deps.db.transaction(async (trx) => {
          const consumed = await consumeSignInLink(trx, token, now);
          if (!consumed || consumed.operatorId !== operator.id) return false;
          await updateOperator(trx, operator.id, { passwordHash });
          await deleteSessionsOf(trx, operator.id);
          return true;
        });
        if (!used) return invalidLinkPage(ctx);
        await recordSignInEvent(deps.db, { event: "password_set", channel: "browser", email: operator.email, operatorId: operator.id, ip: ctx.state.clientIp, reason: link.purpose }, now);
        ctx.status = 303;
        ctx.redirect("/sign-in?done=password");
      },
    },
  ];
}
