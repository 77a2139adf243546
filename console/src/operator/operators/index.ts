import { isOperatorRole, OPERATOR_ROLES, type OperatorRole } from "@payments/access";
import { samePerson } from "../../identity/approvals.js";
import { createOperator, disableOperator, enableOperator, resetOperator, setOperatorRole, type ChangeOutcome } from "../../identity/operator-admin.js";
import { findOperatorById, identityOf, listOperators, type Operator } from "../../identity/operators.js";
import type { ConsoleContext } from "../../context.js";
import { ConsoleError } from "../../errors.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { accountApprovals } from "../approvals/console-texts.js";
import { csrfField, formatTime, ID_PATTERN, notFoundPage, operatorRoute, scrollingTable, type SignedIn, workPage } from "../operator-call.js";
import { operatorTexts, refusalText, type OperatorTextKey } from "./texts.js";

const PAGE_SIZE = 100;

type T = (key: OperatorTextKey, params?: Record<string, string | number>) => string;

function textsOf(who: SignedIn): T {
  return (key, params) => operatorTexts(who.lang, key, params);
}

/** An operator role in the page's language. */
export function roleName(who: SignedIn, role: string): string {
  return isOperatorRole(role) ? accountApprovals(who.lang, `role.${role}`) : role;
}

function roleSelect(who: SignedIn, id: string, name: string, selected: OperatorRole): SafeHtml {
  return html`<select id="${id}" name="${name}">${OPERATOR_ROLES.map((r) => html`<option value="${r}"${r === selected ? html` selected` : null}>${roleName(who, r)}</option>`)}</select>`;
}

function inviteForm(who: SignedIn, t: T, form: Record<string, string> = {}): SafeHtml {
  return html`<form method="post" action="/operators/invite" class="card" aria-labelledby="h-invite">
<h2 id="h-invite">${t("invite.title")}</h2>${csrfField(who)}<p class="hint">${t("invite.hint")}</p>
${field({ id: "invite-email", name: "email", label: t("invite.email"), type: "email", autocomplete: "off", required: true, value: form.email ?? "" })}
${field({ id: "invite-name", name: "displayName", label: t("invite.name"), autocomplete: "off", required: true, value: form.displayName ?? "" })}
<label for="invite-role">${t("invite.role")}</label>${roleSelect(who, "invite-role", "role", isOperatorRole(form.role) ? form.role : "viewer")}
<button type="submit">${t("invite.title")}</button></form>`;
}

/** One account's changes: its role, disable or enable, a new sign-in link (the console decides what waits for a second admin). */
function rowActions(who: SignedIn, t: T, o: Operator): SafeHtml | null {
  if (samePerson(o.email, who.operator.email)) return null;
  const at = (action: string) => `/operators/${o.id}/${action}`;
  return html`<form method="post" action="${at("role")}">${csrfField(who)}<label for="${`role-${o.id}`}">${t("role.label", { name: o.displayName })}</label>${roleSelect(who, `role-${o.id}`, "role", o.role)}<button type="submit">${t("role.submit")}</button></form>
<form method="post" action="${at(o.disabled ? "enable" : "disable")}">${csrfField(who)}<button type="submit">${o.disabled ? t("enable") : t("disable")}</button></form>
<form method="post" action="${at("reset")}">${csrfField(who)}<label class="inline-label"><input type="checkbox" name="clearTotp" value="1"> ${t("reset.totp")}</label><br><button type="submit">${t("reset")}</button></form>`;
}

function accountsTable(who: SignedIn, t: T, operators: Operator[]): SafeHtml {
  const rows = operators.map(
    (o) => html`<tr>
<th scope="row">${o.displayName}${samePerson(o.email, who.operator.email) ? html` (${t("you")})` : null}</th>
<td>${o.email}</td>
<td>${roleName(who, o.role)}</td>
<td>${o.totpSecret ? t("totpOn") : t("totpOff")}</td>
<td>${o.lastSignInAt ? html`<time datetime="${new Date(o.lastSignInAt).toISOString()}">${formatTime(new Date(o.lastSignInAt), who.lang)}</time>` : t("never")}</td>
<td>${o.disabled ? html`<span class="bad">${t("disabled")}</span>` : t("active")}</td>
<td>${rowActions(who, t, o)}</td>
</tr>`,
  );
  return scrollingTable(
    t("caption"),
    html`<table><caption>${t("caption")}</caption>
<thead><tr><th scope="col">${t("name")}</th><th scope="col">${t("email")}</th><th scope="col">${t("role")}</th><th scope="col">${t("totp")}</th><th scope="col">${t("lastSignIn")}</th><th scope="col">${t("state")}</th><th scope="col">${t("actions")}</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  );
}

/** What a change did, as the page says it: waiting (with the approval's link), or done (a link it made shown once). */
function outcomeBody(who: SignedIn, t: T, what: string, outcome: ChangeOutcome): { body: SafeHtml; status: number; noStore: boolean } {
  if (outcome.status === "pending_approval") {
    const id = outcome.approval.id;
    return { body: html`<div class="notice" role="status"><p>${t("waiting", { what })}</p><p><a href="${`/approvals/console/${id}`}">${who.t("call.approvalLink", { id })}</a></p></div>`, status: 202, noStore: false };
  }
  const link = outcome.link;
  const email = "operator" in outcome ? outcome.operator.email : outcome.user.email;
  const shown = link ? html`<p>${t("linkOnce", { email, until: formatTime(new Date(link.expiresAt), who.lang) })}</p><p><code id="sign-in-link">${link.url}</code></p>` : null;
  return { body: html`<div class="notice" role="status"><p>${t("done", { what })}</p>${shown}</div>`, status: 200, noStore: link !== undefined };
}

/**
 * Operator accounts, for admins (the console decides, as in the admin API): the accounts with
 * their role, authenticator, last sign-in and state; invite one; change a role, disable or enable,
 * send a new sign-in link. Each goes through auth/operator-admin.ts, so what hands someone access
 * waits for a second admin (the approvals inbox) and every step is in the console's audit.
 */
export function operatorAccountPages(deps: ConsoleContext): ConsoleRoute[] {
  const listPage = async (ctx: ConsoleContextKoa, who: SignedIn, top: SafeHtml | null, status = 200, form?: Record<string, string>) => {
    const t = textsOf(who);
    const operators = await listOperators(deps.db, { limit: PAGE_SIZE });
    workPage(ctx, who, { title: t("title"), body: html`${top}<p>${t("intro")}</p>${accountsTable(who, t, operators)}${inviteForm(who, t, form)}` }, status);
  };
  /** Runs a change and answers its outcome on the list page; a refusal is said in the page's language, nothing changed. */
  const change = async (ctx: ConsoleContextKoa, who: SignedIn, what: string, run: () => Promise<ChangeOutcome>, form?: Record<string, string>) => {
    try {
      const { body, status, noStore } = outcomeBody(who, textsOf(who), what, await run());
      if (noStore) ctx.set("Cache-Control", "no-store");
      await listPage(ctx, who, body, status);
    } catch (err) {
      if (!(err instanceof ConsoleError)) throw err;
      await listPage(ctx, who, alert(refusalText(who.lang, err.code, err.message)), err.status, form);
    }
  };
  const onAccount = (action: "role" | "disable" | "enable" | "reset"): ConsoleRoute => (operatorRoute(deps, { method: "POST", path: `/operators/:id/${action}`, minRole: "admin" }, async (ctx, who) => {
      const t = textsOf(who);
      const id = ctx.params.id ?? "";
      const target = ID_PATTERN.test(id) ? await findOperatorById(deps.db, id) : undefined;
      if (!target) return notFoundPage(ctx, who);
      const actor = identityOf(who.operator);
      const form = ctx.state.form ?? {};
      const email = target.email;
      if (action === "role") {
        const role = form.role;
        if (!isOperatorRole(role)) return listPage(ctx, who, alert(t("error.INVALID_ROLE")), 400);
        return change(ctx, who, t("what.role", { email, role: roleName(who, role) }), () => setOperatorRole(deps, actor, email, role));
      }
      if (action === "disable") return change(ctx, who, t("what.disable", { email }), () => disableOperator(deps, actor, email));
      if (action === "enable") return change(ctx, who, t("what.enable", { email }), () => enableOperator(deps, actor, email));
      return change(ctx, who, t("what.reset", { email }), () => resetOperator(deps, actor, email, { clearTotp: form.clearTotp === "1" }));
    }));
  return [
    operatorRoute(deps, { method: "GET", path: "/operators", minRole: "admin" }, async (ctx, who) => {
      await listPage(ctx, who, null);
    }),
    operatorRoute(deps, { method: "POST", path: "/operators/invite", minRole: "admin" }, async (ctx, who) => {
      const t = textsOf(who);
      const form = ctx.state.form ?? {};
      const input = { email: (form.email ?? "").slice(0, 254), displayName: (form.displayName ?? "").slice(0, 201), role: form.role as OperatorRole };
      if (!isOperatorRole(input.role)) return listPage(ctx, who, alert(t("error.INVALID_ROLE")), 400, form);
      await change(ctx, who, t("what.invite", { email: input.email.trim(), role: roleName(who, input.role) }), () => createOperator(deps, identityOf(who.operator), input), form);
    }),
    onAccount("role"),
    onAccount("disable"),
    onAccount("enable"),
    onAccount("reset"),
  ];
}
