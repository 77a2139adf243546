import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AuditService, type AuditRecord } from "@payments/contracts/operator";
import { auditRecordOf, isMerchantRole, listAudit, MERCHANT_ROLES, type MerchantRole } from "@payments/access";
import { changeMerchantUserRole, inviteMerchantUser, removeMerchantUser, resetMerchantUser } from "../../identity/merchant-team.js";
import { listMerchantUsers, merchantIdentityOf, type MerchantUser } from "../../identity/merchant-users.js";
import type { SignInLinkOut } from "../../identity/operator-admin.js";
import type { ConsoleContext } from "../../context.js";
import { ConsoleError } from "../../errors.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import { deliverOutcome, personLabel, type LinkDelivery } from "../../identity/mail/deliver.js";
import { linkNotice } from "../../identity/mail/notice.js";
import { formatTime, ID_PATTERN, SERVICES } from "../../shared/params.js";
import type { ConsoleRoute } from "../../route.js";
import { outcomeText, roleReasonText, roleText, rpcText, serviceText } from "../../shared/service-texts.js";
import type { ConsoleContextKoa } from "../../state.js";
import { roleName } from "../layout.js";
import { changeThenSeeOther, merchantCsrfField, merchantNotFound, merchantPage, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { team } from "./texts.js";

type TeamKey = Parameters<typeof team>[1];

const OWNER: readonly MerchantRole[] = ["owner"];

const DONE: Record<string, TeamKey> = { role: "done.role", removed: "done.removed" };

function roleSelect(who: MerchantSignedIn, id: string, selected: MerchantRole): SafeHtml {
  return html`<select id="${id}" name="role">${MERCHANT_ROLES.map((role) => html`<option value="${role}"${role === selected ? html` selected` : null}>${roleName(who.lang, role)}</option>`)}</select>`;
}

interface TeamView {
  invited?: { email: string; link: SignInLinkOut; delivery: LinkDelivery };
  reset?: { email: string; link: SignInLinkOut; delivery: LinkDelivery };
  error?: string;
  form?: { email?: string; displayName?: string; role?: string };
}

async function teamPage(deps: ConsoleContext, ctx: ConsoleContextKoa, who: MerchantSignedIn, view: TeamView = {}, status = 200): Promise<void> {
  const t = (key: TeamKey, params?: Record<string, string>) => team(who.lang, key, params);
  const users = await listMerchantUsers(deps.db, who.user.merchantId);
  const owner = who.user.role === "owner";
  const done = typeof ctx.query.done === "string" ? DONE[ctx.query.done] : undefined;
  const rows = users.map((user: MerchantUser) => {
    const actions = owner
      ? html`<form method="post" action="${`/merchant/team/${user.id}/role`}" class="inline">${merchantCsrfField(who)}<label for="${`role-${user.id}`}" class="inline-label">${t("role.label", { email: user.email })}</label> ${roleSelect(who, `role-${user.id}`, user.role)} <button type="submit">${t("role.submit")}</button></form>
<form method="post" action="${`/merchant/team/${user.id}/remove`}" class="inline">${merchantCsrfField(who)}<button type="submit">${t("remove.submit", { email: user.email })}</button></form>
<form method="post" action="${`/merchant/team/${user.id}/reset`}" class="inline">${merchantCsrfField(who)}${user.totpSecret === null ? null : html`<label><input type="checkbox" name="clearTotp" value="1"> ${t("reset.clearTotp")}</label> `}<button type="submit">${t("reset.submit", { email: user.email })}</button></form>`
      : null;
    return html`<tr><td>${user.displayName}</td><td>${user.email}</td><td>${roleName(who.lang, user.role)}</td><td>${user.lastSignInAt === null ? t("never") : formatTime(new Date(user.lastSignInAt), who.lang)}</td><td>${user.passwordHash ? t("yes") : t("no")}</td>${owner ? html`<td>${actions}</td>` : null}</tr>`;
  });
  const table = html`<table><caption>${t("list.caption")}</caption><thead><tr><th scope="col">${t("col.name")}</th><th scope="col">${t("col.email")}</th><th scope="col">${t("col.role")}</th><th scope="col">${t("col.lastSignIn")}</th><th scope="col">${t("col.password")}</th>${owner ? html`<th scope="col">${t("col.actions")}</th>` : null}</tr></thead><tbody>${rows}</tbody></table>`;
  // Mailed (SMTP_URL): the page names the address, never the link; else the link is shown once, here.
  const invited = view.invited
    ? linkNotice(who.lang, view.invited.delivery, view.invited.link, { codeId: "invite-link", shown: html`<div class="notice" role="status"><p>${t("invite.done", { email: view.invited.email, until: formatTime(new Date(view.invited.link.expiresAt), who.lang) })}</p><p><code id="invite-link">${view.invited.link.url}</code></p></div>` })
    : null;
  const reset = view.reset
    ? linkNotice(who.lang, view.reset.delivery, view.reset.link, { codeId: "reset-link", shown: html`<div class="notice" role="status"><p>${t("reset.done", { email: view.reset.email, until: formatTime(new Date(view.reset.link.expiresAt), who.lang) })}</p><p><code id="reset-link">${view.reset.link.url}</code></p></div>` })
    : null;
  const inviteForm = owner
    ? html`<section class="card" aria-labelledby="invite-title"><h2 id="invite-title">${t("invite.title")}</h2>
<form method="post" action="/merchant/team/invite" novalidate>${merchantCsrfField(who)}
${field({ name: "email", label: t("invite.email"), type: "email", value: view.form?.email ?? "", autocomplete: "off", required: true })}
${field({ name: "displayName", label: t("invite.name"), value: view.form?.displayName ?? "", autocomplete: "off" })}
<label for="invite-role">${t("invite.role")}</label>
${roleSelect(who, "invite-role", isMerchantRole(view.form?.role) ? view.form.role : "viewer")}
<p class="hint">${t("roles.help")}</p>
<button type="submit">${t("invite.submit")}</button>
</form></section>`
    : html`<p>${t("readOnly")}</p>`;
  merchantPage(
    ctx,
    who,
    {
      title: t("title"),
      active: "team",
      body: html`${notice(done ? t(done) : undefined)}${alert(view.error)}${invited}${reset}
${tableScroll(t("list.caption"), table)}
<p><a href="/merchant/totp">${t("totp.link")}</a></p>
${owner ? html`<p><a href="/merchant/team/audit">${t("audit.link")}</a></p>` : null}
${inviteForm}`,
    },
    status,
  );
}

function userIdOf(ctx: ConsoleContextKoa): string | undefined {
  const id = (ctx.params as Record<string, string>).userId ?? "";
  return ID_PATTERN.test(id) ? id : undefined;
}

/** A refused team change (last owner, bad email, an id not of this team): the Team page with the reason, or 404. */
async function refused(deps: ConsoleContext, ctx: ConsoleContextKoa, who: MerchantSignedIn, err: unknown, form?: TeamView["form"]): Promise<void> {
  if (!(err instanceof ConsoleError)) throw err;
  if (err.status === 404) return merchantNotFound(ctx, who, "team");
  await teamPage(deps, ctx, who, { error: err.message, ...(form ? { form } : {}) }, err.status);
}

/** The merchant's own trail: the console's team records for it and each service's records of its users' calls. */
async function auditPage(deps: ConsoleContext, ctx: ConsoleContextKoa, who: MerchantSignedIn): Promise<void> {
  const t = (key: TeamKey, params?: Record<string, string>) => team(who.lang, key, params);
  const LIMIT = 100;
  const own = await listAudit(deps.db, { merchantId: who.user.merchantId, limit: LIMIT });
  const records: Array<{ source: string; record: AuditRecord }> = own === "bad-cursor" ? [] : own.rows.map((row) => ({ source: "console", record: auditRecordOf(row) }));
  const problems: string[] = [];
  await Promise.all(
    SERVICES.map(async (service) => {
      try {
        const page = await who.client(AuditService, service).listAuditRecords({ limit: LIMIT });
        for (const record of page.records) records.push({ source: service, record });
      } catch (err) {
        problems.push(t("audit.partial", { service, detail: err instanceof Error ? err.message : "?" }));
      }
    }),
  );
  const at = (r: AuditRecord) => (r.at ? timestampDate(r.at).getTime() : 0);
  records.sort((a, b) => at(b.record) - at(a.record));
  const shown = records.slice(0, LIMIT);
  const rows = shown.map(
    ({ source, record }) =>
      html`<tr><td>${record.at ? html`<time datetime="${timestampDate(record.at).toISOString()}">${formatTime(timestampDate(record.at), who.lang)}</time>` : null}</td><td>${record.actor}</td><td>${record.role ? roleText(who.lang, record.role) : "—"}</td><td>${rpcText(who.lang, record.rpc)}${record.reason ? html`<br><span class="hint">${roleReasonText(who.lang, record.reason)}</span>` : null}</td><td>${record.targetIds.map((id, i) => html`${i > 0 ? ", " : ""}${id === who.user.merchantId ? html`${who.merchantName} <small><code class="id">${id}</code></small>` : id}`)}</td><td>${outcomeText(who.lang, record.outcome)}</td><td>${serviceText(who.lang, source)}</td></tr>`,
  );
  const table = html`<table><caption>${t("audit.caption")}</caption><thead><tr><th scope="col">${t("audit.col.at")}</th><th scope="col">${t("audit.col.actor")}</th><th scope="col">${t("audit.col.role")}</th><th scope="col">${t("audit.col.what")}</th><th scope="col">${t("audit.col.targets")}</th><th scope="col">${t("audit.col.outcome")}</th><th scope="col">${t("audit.col.source")}</th></tr></thead><tbody>${rows}</tbody></table>`;
  merchantPage(ctx, who, {
    title: t("audit.title"),
    active: "team",
    body: html`${problems.map((p) => html`<div class="notice" role="status">${p}</div>`)}
${shown.length === 0 ? html`<p>${t("audit.empty")}</p>` : tableScroll(t("audit.caption"), table)}
<p class="hint">${t("audit.limit", { n: String(LIMIT) })}</p>`,
  });
}

/**
 * /merchant/team: every user of the merchant sees the team (read-only); an owner invites (the
 * one-time link shown once, on the answer), changes roles, removes people, gives one a new
 * one-time link (their sessions end; the link shown once), and reads the
 * merchant's audit trail (/merchant/team/audit). The owner-only routes refuse any other role with
 * 403 before anything runs, by page or by a replayed POST. A user id of another merchant is 404.
 */
export function merchantTeamPages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    merchantRoute(deps, { method: "GET", path: "/merchant/team" }, async (ctx, who) => teamPage(deps, ctx, who)),
    merchantRoute(deps, { method: "POST", path: "/merchant/team/invite", roles: OWNER }, async (ctx, who) => {
      const form = ctx.state.form ?? {};
      const input = { email: (form.email ?? "").slice(0, 254), displayName: (form.displayName ?? "").slice(0, 200), role: form.role ?? "" };
      if (!isMerchantRole(input.role)) return teamPage(deps, ctx, who, { error: "role: one of owner, developer, finance, viewer", form: input }, 400);
      try {
        const { user, link } = await inviteMerchantUser(deps, merchantIdentityOf(who.user), { merchantId: who.user.merchantId, email: input.email, displayName: input.displayName, role: input.role });
        const delivery = await deliverOutcome(deps, { status: "done", user, link }, { lang: who.lang, purpose: "create", by: personLabel(who.user.displayName, who.user.email), merchant: who.merchantName });
        await teamPage(deps, ctx, who, { invited: { email: user.email, link, delivery } }, 201);
      } catch (err) {
        await refused(deps, ctx, who, err, input);
      }
    }),
    merchantRoute(deps, { method: "POST", path: "/merchant/team/:userId/role", roles: OWNER }, async (ctx, who) => {
      const userId = userIdOf(ctx);
      if (!userId) return merchantNotFound(ctx, who, "team");
      const role = ctx.state.form?.role;
      if (!isMerchantRole(role)) return teamPage(deps, ctx, who, { error: "role: one of owner, developer, finance, viewer" }, 400);
      const change = () => changeMerchantUserRole(deps, merchantIdentityOf(who.user), who.user.merchantId, userId, role);
      return changeThenSeeOther(ctx, change, (err) => refused(deps, ctx, who, err), "/merchant/team?done=role");
    }),
    merchantRoute(deps, { method: "POST", path: "/merchant/team/:userId/remove", roles: OWNER }, async (ctx, who) => {
      const userId = userIdOf(ctx);
      if (!userId) return merchantNotFound(ctx, who, "team");
      const change = () => removeMerchantUser(deps, merchantIdentityOf(who.user), who.user.merchantId, userId);
      // Removing oneself ends one's own sessions: back to sign-in.
      return changeThenSeeOther(ctx, change, (err) => refused(deps, ctx, who, err), userId === who.user.id ? "/merchant/sign-in" : "/merchant/team?done=removed");
    }),
    merchantRoute(deps, { method: "POST", path: "/merchant/team/:userId/reset", roles: OWNER }, async (ctx, who) => {
      const userId = userIdOf(ctx);
      if (!userId) return merchantNotFound(ctx, who, "team");
      try {
        const { user, link } = await resetMerchantUser(deps, merchantIdentityOf(who.user), userId, { clearTotp: ctx.state.form?.clearTotp === "1" });
        // The link is shown once, on this answer (no-store, as the invitation's).
        const delivery = await deliverOutcome(deps, { status: "done", user, link }, { lang: who.lang, purpose: "reset", by: personLabel(who.user.displayName, who.user.email), merchant: who.merchantName });
        await teamPage(deps, ctx, who, { reset: { email: user.email, link, delivery } });
      } catch (err) {
        await refused(deps, ctx, who, err);
      }
    }),
    merchantRoute(deps, { method: "GET", path: "/merchant/team/audit", roles: OWNER }, async (ctx, who) => auditPage(deps, ctx, who)),
  ];
}
