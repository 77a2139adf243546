import { MerchantService } from "@payments/contracts/merchant";
import { roleAtLeast } from "@payments/access";
import { approveChange, rejectChange } from "../../identity/approval-decisions.js";
import { findApproval, listApprovals, samePerson, type Approval, type ApprovalStatus } from "../../identity/approvals.js";
import { identityOf } from "../../identity/operators.js";
import { nowMs, type ConsoleContext } from "../../context.js";
import { ConsoleError } from "../../errors.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, notice } from "../../shared/layout.js";
import { mailChangeLink, makerLabel, purposeOfAction } from "../../identity/mail/deliver.js";
import { linkNotice } from "../../identity/mail/notice.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { csrfField, formatTime, ID_PATTERN, notFoundPage, operatorRoute, seeOther, type SignedIn, workPage } from "../operator-call.js";
import type { InboxItem } from "./inbox.js";
import { accountApprovals, type AccountApprovalKey } from "./console-texts.js";

const LIST_SIZE = 50;

const link = (a: Approval) => `/approvals/console/${a.id}`;

function texts(who: SignedIn) {
  return (key: AccountApprovalKey, params?: Record<string, string | number>) => accountApprovals(who.lang, key, params);
}

function roleText(who: SignedIn, role: unknown): string {
  const key = `role.${String(role)}` as AccountApprovalKey;
  return typeof role === "string" && /^(viewer|support|operator|finance|admin|owner|developer)$/.test(role) ? texts(who)(key) : String(role);
}

/** The merchants' names the merchant service shows this admin, by id (a merchant it does not show keeps its id). */
async function merchantNames(who: SignedIn, approvals: Approval[]): Promise<Map<string, string>> {
  const ids = [...new Set(approvals.map((a) => a.payload.merchantId).filter((id): id is string => typeof id === "string"))];
  const names = new Map<string, string>();
  await Promise.all(
    ids.map(async (merchantId) => {
      try {
        const name = (await who.client(MerchantService).getMerchant({ merchantId })).merchant?.name;
        if (name) names.set(merchantId, name);
      } catch {
        // Not shown to this admin, or the service does not answer: the id stands for it.
      }
    }),
  );
  return names;
}

/** What a change does, in the reader's language: names before ids. */
function describe(who: SignedIn, a: Approval, names: Map<string, string>): string {
  const t = texts(who);
  const p = a.payload;
  const merchantId = typeof p.merchantId === "string" ? p.merchantId : "";
  const merchant = names.get(merchantId) ? `${names.get(merchantId)} (${merchantId})` : merchantId;
  const params = { email: a.targetEmail, role: roleText(who, p.role), from: roleText(who, p.from), merchant };
  switch (a.action) {
    case "create_operator":
    case "set_role":
    case "enable_operator":
    case "invite_merchant_user":
      return t(`action.${a.action}`, params);
    case "reset_operator":
    case "reset_merchant_user":
      return t(p.clearTotp === true ? `action.${a.action}_totp` : `action.${a.action}`, params);
    default:
      return t("action.unknown", { action: a.action });
  }
}

function statusText(who: SignedIn, status: ApprovalStatus): string {
  return status === "pending" ? texts(who)("status.pending") : who.t(`approval.status.${status}`);
}
/**
 * The console's own approvals in the approvals inbox, for admins: account changes (auth/approvals.ts)
 * with the same status filter as the services'. None for anyone else: only admins decide them.
 */
export async function accountInboxItems(deps: ConsoleContext, who: SignedIn, status: ApprovalStatus | "all"): Promise<InboxItem[]> {
  if (!roleAtLeast(who.operator.role, "admin")) return [];
  const approvals = await listApprovals(deps.db, { ...(status === "all" ? {} : { status }), now: nowMs(deps), limit: LIST_SIZE });
  const names = await merchantNames(who, approvals);
  return approvals.map((a) => ({
    id: a.id,
    where: "console",
    href: link(a),
    what: describe(who, a, names),
    maker: a.requestedBy,
    own: samePerson(a.requestedBy, who.operator.email),
    createdAt: new Date(a.requestedAt),
    expiresAt: new Date(a.expiresAt),
    status: a.status,
  }));
}

function detailBody(who: SignedIn, a: Approval, names: Map<string, string>, banner: SafeHtml | null, refusal?: string): SafeHtml {
  const t = texts(who);
  const own = samePerson(a.requestedBy, who.operator.email);
  const action = (d: "approve" | "reject") => `/approvals/console/${a.id}/${d}`;
  // Not offered to the maker; approveChange refuses them anyway (OWN_REQUEST), under any spelling.
  const approveForm = own
    ? html`<p class="notice">${who.t("approval.ownWaiting")}</p>`
    : html`<form method="post" action="${action("approve")}" class="card" aria-labelledby="h-approve">
<h3 id="h-approve">${t("approve")}</h3>${csrfField(who)}<p class="hint">${t("approveHint")}</p>
<button type="submit">${t("approve")}</button></form>`;
  const rejectForm = html`<form method="post" action="${action("reject")}" class="card" aria-labelledby="h-reject">
<h3 id="h-reject">${own ? who.t("approval.withdraw") : who.t("approval.reject")}</h3>${csrfField(who)}
<button type="submit">${own ? who.t("approval.withdraw") : who.t("approval.reject")}</button></form>`;
  const merchantId = typeof a.payload.merchantId === "string" ? a.payload.merchantId : undefined;
  return html`${banner}${alert(refusal)}
<p><a href="/approvals#account-changes">${who.t("approvals.back")}</a></p>
<dl class="facts card">
<dt>${t("what")}</dt><dd>${describe(who, a, names)}</dd>
<dt>${t("account")}</dt><dd>${a.targetEmail}</dd>
${merchantId ? html`<dt>${t("merchant")}</dt><dd>${names.get(merchantId) ?? merchantId}</dd>` : null}
<dt>${who.t("approvals.maker")}</dt><dd>${a.requestedBy}</dd>
<dt>${who.t("approvals.created")}</dt><dd>${formatTime(new Date(a.requestedAt), who.lang)}</dd>
<dt>${who.t("approvals.expires")}</dt><dd>${formatTime(new Date(a.expiresAt), who.lang)}</dd>
<dt>${who.t("approvals.status")}</dt><dd>${statusText(who, a.status)}</dd>
${a.decidedBy ? html`<dt>${who.t("approval.decidedBy")}</dt><dd>${a.decidedBy}${a.decidedAt !== null ? html` · ${formatTime(new Date(a.decidedAt), who.lang)}` : null}</dd>` : null}
</dl>
${a.status === "pending" ? html`<h2>${who.t("approval.decide")}</h2><div class="actions">${approveForm}${rejectForm}</div>` : null}`;
}

/**
 * The console's approvals of account changes, on the approvals page (admins: the console decides,
 * as in the admin API): one change, approve (the change is made; a one-time link it makes is shown
 * to this approver only, once, on a no-store answer) or reject. The routes come before the
 * services' `/approvals/:service/:id`.
 */
export function accountApprovalPages(deps: ConsoleContext): ConsoleRoute[] {
  const show = async (ctx: ConsoleContextKoa, who: SignedIn, id: string, banner: SafeHtml | null, refusal?: ConsoleError) => {
    const approval = ID_PATTERN.test(id) ? await findApproval(deps.db, id, nowMs(deps)) : undefined;
    if (!approval) return notFoundPage(ctx, who);
    const names = await merchantNames(who, [approval]);
    workPage(ctx, who, { title: texts(who)("title", { id }), body: detailBody(who, approval, names, banner, refusal?.message) }, refusal?.status ?? 200);
  };
  const decide = (decision: "approve" | "reject"): ConsoleRoute => (operatorRoute(deps, { method: "POST", path: `/approvals/console/:id/${decision}`, minRole: "admin" }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      if (!ID_PATTERN.test(id)) return notFoundPage(ctx, who);
      try {
        if (decision === "reject") {
          await rejectChange(deps, identityOf(who.operator), id);
          return seeOther(ctx, `/approvals/console/${id}?done=reject`);
        }
        const { approval, outcome } = await approveChange(deps, identityOf(who.operator), id);
        if (outcome.status !== "done" || !outcome.link) return seeOther(ctx, `/approvals/console/${id}?done=approve`);
        // With SMTP_URL the link goes to the person by mail, saying who asked for it, and is not shown here.
        const delivery = await mailChangeLink(deps, identityOf(who.operator), outcome, { lang: who.lang, purpose: purposeOfAction(approval.action), by: await makerLabel(deps.db, approval.requestedBy) });
        // The link is this approver's to hand over: shown now, on an answer no cache keeps, and never again.
        const email = "operator" in outcome ? outcome.operator.email : outcome.user.email;
        ctx.set("Cache-Control", "no-store");
        const shown = html`<div class="notice" role="status"><p>${texts(who)("done")}</p><p>${texts(who)("linkOnce", { email, until: formatTime(new Date(outcome.link.expiresAt), who.lang) })}</p><p><code id="sign-in-link">${outcome.link.url}</code></p></div>`;
        await show(ctx, who, id, linkNotice(who.lang, delivery, outcome.link, { codeId: "sign-in-link", shown, lead: texts(who)("done") }));
      } catch (err) {
        if (!(err instanceof ConsoleError)) throw err;
        await show(ctx, who, id, null, err);
      }
    }));
  return [
    operatorRoute(deps, { method: "GET", path: "/approvals/console/:id", minRole: "admin" }, async (ctx, who) => {
      const done = ctx.query.done;
      const banner = done === "approve" ? notice(texts(who)("done")) : done === "reject" ? notice(texts(who)("rejected")) : null;
      await show(ctx, who, ctx.params.id ?? "", banner);
    }),
    decide("approve"),
    decide("reject"),
  ];
}
