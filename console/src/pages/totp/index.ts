import { updateOperator } from "../../auth/operators.js";
import { setPendingTotpSecret } from "../../auth/sessions.js";
import { recordSignInEvent } from "../../auth/sign-in-events.js";
import { totpRequiredFor } from "../../auth/sign-in.js";
import { newTotpSecret, totpStep, totpUri } from "../../auth/totp.js";
import { nowMs, type ConsoleContext } from "../../context.js";
import { ConsoleError } from "../../errors.js";
import { html } from "../../html.js";
import { text, type TextKey } from "../../i18n.js";
import { alert, field, notice, renderPage } from "../../layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";

function signedIn(ctx: ConsoleContextKoa) {
  const { operator, session } = ctx.state;
  if (!operator || !session) throw new ConsoleError(500, "INTERNAL_ERROR", "the TOTP page runs behind requireOperator");
  return { operator, session };
}

/**
 * GET/POST /totp: enrolment of an authenticator app. The secret shown is kept (sealed) on the
 * session until a code from it is confirmed, and only then becomes the account's; the confirmed
 * code's step is remembered so it cannot be replayed at the next sign-in.
 */
export function totpPages(deps: ConsoleContext): ConsoleRoute[] {
  const page = async (ctx: ConsoleContextKoa, error?: string, status = 200) => {
    const { operator, session } = signedIn(ctx);
    const lang = ctx.state.lang;
    const t = (key: TextKey) => text(lang, key);
    const header = { operator, csrfToken: session.csrfToken };
    if (operator.totpSecret !== null) {
      return renderPage(ctx, { title: t("totp.title"), body: html`${notice(t("totp.enrolled"))}`, ...header });
    }
    let secret = session.pendingTotpSecret ? deps.totp.open(session.pendingTotpSecret) : undefined;
    if (!secret) {
      secret = newTotpSecret();
      await setPendingTotpSecret(deps.db, session.idHash, deps.totp.seal(secret));
    }
    renderPage(
      ctx,
      {
        title: t("totp.title"),
        body: html`${totpRequiredFor(deps, operator) ? notice(t("totp.required")) : null}${alert(error)}
<p>${t("totp.intro")}</p>
<dl class="card">
<dt>${t("totp.key")}</dt><dd><code>${secret.replace(/(.{4})/g, "$1 ").trim()}</code></dd>
<dt>${t("totp.uri")}</dt><dd><code>${totpUri(secret, operator.email)}</code></dd>
</dl>
<form method="post" action="/totp" class="card" novalidate>
<input type="hidden" name="_csrf" value="${session.csrfToken}">
${field({ name: "code", label: t("totp.code"), autocomplete: "one-time-code", inputmode: "numeric", required: true, error })}
<button type="submit">${t("totp.submit")}</button>
</form>`,
        ...header,
      },
      status,
    );
  };

  return [
    { method: "GET", path: "/totp", access: "enrolling", handler: (ctx) => page(ctx) },
    {
      method: "POST",
      path: "/totp",
      access: "enrolling",
      handler: async (ctx) => {
        const { operator, session } = signedIn(ctx);
        if (operator.totpSecret !== null || !session.pendingTotpSecret) return page(ctx);
        const secret = deps.totp.open(session.pendingTotpSecret);
        const step = totpStep(secret, ctx.state.form?.code ?? "", deps.clock.now());
        if (step === undefined) return page(ctx, text(ctx.state.lang, "totp.invalid"), 400);
        const now = nowMs(deps);
        await deps.db.transaction(async (trx) => {
          await updateOperator(trx, operator.id, { totpSecret: deps.totp.seal(secret), totpLastStep: step });
          await setPendingTotpSecret(trx, session.idHash, null);
        });
        await recordSignInEvent(deps.db, { event: "totp_enrolled", channel: "browser", email: operator.email, operatorId: operator.id, ip: ctx.state.clientIp }, now);
        ctx.status = 303;
        ctx.redirect("/");
      },
    },
  ];
}
