import { MerchantService } from "@payments/contracts/merchant";
import { roleAtLeast } from "@payments/access";
import { operatorResetsMerchantUser, removeMerchantUser } from "../../identity/merchant-team.js";
import { listMerchantUsers, type MerchantUser } from "../../identity/merchant-users.js";
import { identityOf } from "../../identity/operators.js";
import type { ConsoleContext } from "../../context.js";
import { ConsoleError } from "../../errors.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert } from "../../shared/layout.js";
import { roleText as roleName } from "../../shared/service-texts.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { csrfField, formatTime, ID_PATTERN, notFoundPage, operatorRoute, refusalOf, scrollingTable, type SignedIn, workPage } from "../operator-call.js";
import { merchantUserTexts, type MerchantUserTextKey } from "./texts.js";

type T = (key: MerchantUserTextKey, params?: Record<string, string | number>) => string;

const textsOf = (who: SignedIn): T => (key, params) => merchantUserTexts(who.lang, key, params);

/** An admin's changes of one user (the console decides: auth/merchant-team.ts); none for anyone else, or a disabled user. */
function rowActions(who: SignedIn, t: T, merchantId: string, u: MerchantUser): SafeHtml | null {
  if (!roleAtLeast(who.operator.role, "admin") || u.disabled) return null;
  const at = (action: string) => `/merchants/${merchantId}/users/${u.id}/${action}`;
  return html`<form method="post" action="${at("reset")}">${csrfField(who)}<label class="inline-label"><input type="checkbox" name="clearTotp" value="1"> ${t("reset.totp")}</label><br><button type="submit">${t("reset")}</button></form>
<form method="post" action="${at("disable")}">${csrfField(who)}<button type="submit">${t("disable")}</button></form>`;
}

function usersTable(who: SignedIn, t: T, merchantId: string, merchant: string, users: MerchantUser[]): SafeHtml {
  if (users.length === 0) return html`<p>${t("empty")}</p>`;
  const rows = users.map(
    (u) => html`<tr>
<th scope="row">${u.displayName}</th>
<td>${u.email}</td>
<td>${roleName(who.lang, u.role)}</td>
<td>${u.totpSecret ? t("totpOn") : t("totpOff")}</td>
<td>${u.lastSignInAt ? html`<time datetime="${new Date(u.lastSignInAt).toISOString()}">${formatTime(new Date(u.lastSignInAt), who.lang)}</time>` : t("never")}</td>
<td>${u.disabled ? html`<span class="bad">${t("disabled")}</span>` : t("active")}</td>
${roleAtLeast(who.operator.role, "admin") ? html`<td>${rowActions(who, t, merchantId, u)}</td>` : null}
</tr>`,
  );
  return scrollingTable(
    t("caption", { merchant }),
    html`<table><caption>${t("caption", { merchant })}</caption>
<thead><tr><th scope="col">${t("name")}</th><th scope="col">${t("email")}</th><th scope="col">${t("role")}</th><th scope="col">${t("totp")}</th><th scope="col">${t("lastSignIn")}</th><th scope="col">${t("state")}</th>${roleAtLeast(who.operator.role, "admin") ? html`<th scope="col">${t("actions")}</th>` : null}</tr></thead>
<tbody>${rows}</tbody></table>`,
  );
}

/** The merchant's name as the merchant service shows this operator, or its refusal (404 for one it does not show). */
async function merchantName(who: SignedIn, merchantId: string): Promise<{ name: string } | { refusal: ReturnType<typeof refusalOf> }> {
  try {
    return { name: (await who.client(MerchantService).getMerchant({ merchantId })).merchant?.name ?? merchantId };
  } catch (err) {
    return { refusal: refusalOf(err, who.t) };
  }
}

function refusalText(who: SignedIn, err: ConsoleError): string {
  const t = textsOf(who);
  if (err.code === "NOT_FOUND") return t("error.NOT_FOUND");
  if (err.code === "LAST_OWNER") return t("error.LAST_OWNER");
  return t("error.other", { message: err.message });
}

/**
 * A merchant's dashboard users for our people (`/merchants/:id/users`): support and above read
 * them (name, email, role, authenticator, last sign-in, state); an admin sends a new sign-in link
 * (waits for a second admin, who is given it) or disables one, through auth/merchant-team.ts as
 * the admin API does. The invite stays on the merchant's page (pages/merchants/invite-user.ts).
 */
export function merchantUserPages(deps: ConsoleContext): ConsoleRoute[] {
  const page = async (ctx: ConsoleContextKoa, who: SignedIn, merchantId: string, top: SafeHtml | null, status = 200) => {
    const t = textsOf(who);
    const found = await merchantName(who, merchantId);
    if ("refusal" in found) return workPage(ctx, who, { title: t("link"), body: alert(found.refusal.message) ?? html`` }, found.refusal.status);
    const users = await listMerchantUsers(deps.db, merchantId, { includeDisabled: true });
    const body = html`${top}<p>${t("intro")}</p>${usersTable(who, t, merchantId, found.name, users)}
<p><a href="${`/merchants/${merchantId}#h-invite-user`}">${t("invite")}</a></p><p><a href="${`/merchants/${merchantId}`}">${t("back")}</a></p>`;
    workPage(ctx, who, { title: t("title", { merchant: found.name }), body }, status);
  };
  const act = (action: "reset" | "disable"): ConsoleRoute => (operatorRoute(deps, { method: "POST", path: `/merchants/:id/users/:userId/${action}`, minRole: "admin" }, async (ctx, who) => {
      const t = textsOf(who);
      const merchantId = ctx.params.id ?? "";
      const userId = ctx.params.userId ?? "";
      if (!ID_PATTERN.test(merchantId) || !ID_PATTERN.test(userId)) return notFoundPage(ctx, who);
      const user = (await listMerchantUsers(deps.db, merchantId, { includeDisabled: true })).find((u) => u.id === userId);
      if (!user) return page(ctx, who, merchantId, alert(t("error.NOT_FOUND")), 404);
      const actor = identityOf(who.operator);
      try {
        if (action === "disable") {
          await removeMerchantUser(deps, actor, merchantId, userId);
          return await page(ctx, who, merchantId, html`<div class="notice" role="status">${t("done", { what: t("what.disable", { email: user.email }) })}</div>`);
        }
        const outcome = await operatorResetsMerchantUser(deps, actor, merchantId, userId, { clearTotp: ctx.state.form?.clearTotp === "1" });
        const what = t("what.reset", { email: user.email });
        if (outcome.status === "pending_approval") {
          const id = outcome.approval.id;
          return await page(ctx, who, merchantId, html`<div class="notice" role="status"><p>${t("waiting", { what })}</p><p><a href="${`/approvals/console/${id}`}">${who.t("call.approvalLink", { id })}</a></p></div>`, 202);
        }
        // Only at bootstrap (no enabled admin to approve): the link is this admin's to hand over, once.
        ctx.set("Cache-Control", "no-store");
        const link = outcome.link;
        await page(ctx, who, merchantId, html`<div class="notice" role="status"><p>${t("done", { what })}</p>${link ? html`<p>${t("linkOnce", { email: user.email, until: formatTime(new Date(link.expiresAt), who.lang) })}</p><p><code>${link.url}</code></p>` : null}</div>`);
      } catch (err) {
        if (!(err instanceof ConsoleError)) throw err;
        await page(ctx, who, merchantId, alert(refusalText(who, err)), err.status);
      }
    }));
  return [
    operatorRoute(deps, { method: "GET", path: "/merchants/:id/users", minRole: "support" }, async (ctx, who) => {
      const merchantId = ctx.params.id ?? "";
      if (!ID_PATTERN.test(merchantId)) return notFoundPage(ctx, who);
      await page(ctx, who, merchantId, null);
    }),
    act("reset"),
    act("disable"),
  ];
}
