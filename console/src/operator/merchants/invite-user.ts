import { MerchantService } from "@payments/contracts/merchant";
import { isMerchantRole, MERCHANT_ROLES, roleAtLeast } from "@payments/access";
import { operatorInvitesMerchantUser } from "../../identity/merchant-team.js";
import { identityOf } from "../../identity/operators.js";
import type { ConsoleContext } from "../../context.js";
import { ConsoleError } from "../../errors.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field } from "../../shared/layout.js";
import { deliverOutcome, personLabel } from "../../identity/mail/deliver.js";
import { linkNotice } from "../../identity/mail/notice.js";
import { roleText as roleName } from "../../shared/service-texts.js";
import { inviteTexts as team } from "./invite-texts.js";
import type { ConsoleRoute } from "../../route.js";
import { csrfField, formatTime, operatorRoute, refusalOf, type SignedIn, workPage } from "../operator-call.js";

/** The "Invite a merchant user" form on a merchant's page (admins only: the console decides, as for operator accounts). */
export function inviteUserForm(who: SignedIn, merchantId: string): SafeHtml | null {
  if (!roleAtLeast(who.operator.role, "admin")) return null;
  const t = (key: Parameters<typeof team>[1]) => team(who.lang, key);
  return html`<form method="post" action="${`/merchants/${merchantId}/users/invite`}" class="card" aria-labelledby="h-invite-user">
<h3 id="h-invite-user">${t("operator.invite.title")}</h3>${csrfField(who)}<p class="hint">${t("operator.invite.hint")}</p>
${field({ id: "invite-email", name: "email", label: t("invite.email"), type: "email", autocomplete: "off", required: true })}
${field({ id: "invite-name", name: "displayName", label: t("invite.name"), autocomplete: "off" })}
<label for="invite-role">${t("invite.role")}</label><select id="invite-role" name="role">${MERCHANT_ROLES.map((role) => html`<option value="${role}"${role === "owner" ? html` selected` : null}>${roleName(who.lang, role)}</option>`)}</select>
<button type="submit">${t("operator.invite.title")}</button></form>`;
}

/**
 * POST /merchants/:id/users/invite (admin): a user of the merchant, invited as the signed-in
 * operator (the merchant must exist, as the merchant service tells them), and the one-time link
 * shown once on the answer (no-store).
 */
export function merchantInvitePages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    operatorRoute(deps, { method: "POST", path: "/merchants/:id/users/invite", minRole: "admin", ids: ["id"] }, async (ctx, who, { id }) => {
      const t = (key: Parameters<typeof team>[1], params?: Record<string, string>) => team(who.lang, key, params);
      const back = html`<p><a href="${`/merchants/${id}`}">${t("operator.back")}</a></p>`;
      const page = (body: SafeHtml, status: number) => workPage(ctx, who, { title: t("operator.invite.title"), body: html`${body}${back}` }, status);
      let name: string;
      try {
        name = (await who.client(MerchantService).getMerchant({ merchantId: id })).merchant?.name ?? id;
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        return page(alert(refusal.message) ?? html``, refusal.status);
      }
      const form = ctx.state.form ?? {};
      const role = form.role;
      if (!isMerchantRole(role)) return page(alert(t("operator.invite.badRole")) ?? html``, 400);
      try {
        const outcome = await operatorInvitesMerchantUser(deps, identityOf(who.operator), { merchantId: id, email: (form.email ?? "").slice(0, 254), displayName: (form.displayName ?? "").slice(0, 200), role });
        if (outcome.status === "pending_approval") {
          // The link goes to the second admin who approves, never to the one who asked.
          const approval = outcome.approval;
          return page(html`<div class="notice" role="status"><p>${t("operator.invite.waiting", { email: approval.targetEmail, merchant: name })}</p><p><a href="${`/approvals/console/${approval.id}`}">${who.t("call.approvalLink", { id: approval.id })}</a></p></div>`, 202);
        }
        if (!("user" in outcome) || !outcome.link) throw new Error("an invite answered no user or link");
        ctx.set("Cache-Control", "no-store");
        const delivery = await deliverOutcome(deps, { ...outcome, link: outcome.link }, { lang: who.lang, purpose: "create", by: personLabel(who.operator.displayName, who.operator.email), merchant: name });
        const shown = html`<div class="notice" role="status"><p>${t("operator.invite.done", { email: outcome.user.email, merchant: name, until: formatTime(new Date(outcome.link.expiresAt), who.lang) })}</p><p><code id="invite-link">${outcome.link.url}</code></p></div>`;
        page(linkNotice(who.lang, delivery, outcome.link, { codeId: "invite-link", shown }), 201);
      } catch (err) {
        if (!(err instanceof ConsoleError)) throw err;
        page(alert(err.message) ?? html``, err.status);
      }
    }),
  ];
}
