import { fromBinary } from "@bufbuild/protobuf";
import { CreateMerchantResponseSchema, MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus, type Approval } from "@payments/contracts/operator";
import { APPROVAL_STATUSES, approvalStatusFromProto, isApprovalStatusName } from "@payments/contracts/statuses";
import { samePerson } from "../../identity/approvals.js";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ServiceName } from "../../service-clients.js";
import type { ConsoleContextKoa, RouteContext } from "../../state.js";
import { createdMerchantSecrets, secretPage } from "../merchants/index.js";
import { approvalText } from "../../shared/approval-texts.js";
import { accountApprovalPages } from "./console-approvals.js";
import { readInbox, type Inbox } from "./inbox.js";
import { inboxTexts, type InboxKey } from "./inbox-texts.js";
import { codeText, roleText } from "../../shared/service-texts.js";
import { csrfField, cursorParam, formatTime, isServiceName, notFoundPage, operatorRoute, type Refusal, refusalOf, scrollingTable, type SignedIn, timeOf, workPage } from "../operator-call.js";

/** The RPC whose approved run answers secrets, given to the approver once: a live merchant's creation. */
const CREATE_MERCHANT = `${MerchantService.typeName}/${MerchantService.method.createMerchant.name}`;
const APPROVAL_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** The list's status filter: one status, or every one (`all`); pending when the query names neither. */
const STATUS_FILTERS = [...APPROVAL_STATUSES, "all"] as const;
type StatusFilter = (typeof STATUS_FILTERS)[number];

function statusFilter(value: unknown): StatusFilter {
  return typeof value === "string" && (value === "all" || isApprovalStatusName(value)) ? value : "pending";
}

function statusText(who: SignedIn, status: ApprovalStatus): string {
  return who.t(`approval.status.${approvalStatusFromProto(status) ?? "unknown"}`);
}

function ti(who: SignedIn) {
  return (key: InboxKey, params?: Record<string, string | number>) => inboxTexts(who.lang, key, params);
}

/** A stored request's JSON, indented for reading; as it is when it is not JSON. */
function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

function listPage(who: SignedIn, status: StatusFilter, inbox: Inbox): SafeHtml {
  const t = ti(who);
  const filter = html`<form method="get" action="/approvals" class="filters">
<div><label for="field-status">${who.t("approvals.status")}</label>
<select id="field-status" name="status">${STATUS_FILTERS.map((s) => html`<option value="${s}"${s === status ? html` selected` : null}>${who.t(`approvals.filter.${s}`)}</option>`)}</select></div>
<button type="submit">${who.t("approvals.show")}</button>
</form>`;
  const rows = inbox.items.map(
    (a) => html`<tr>
<td><a href="${a.href}">${a.id}</a></td>
<td>${t(`where.${a.where}`)}</td>
<td>${a.what}</td>
<td>${a.maker}${a.own ? html` (${who.t("approvals.you")})` : null}</td>
<td><time datetime="${a.createdAt.toISOString()}">${formatTime(a.createdAt, who.lang)}</time></td>
<td><time datetime="${a.expiresAt.toISOString()}">${formatTime(a.expiresAt, who.lang)}</time></td>
<td>${who.t(`approval.status.${a.status}`)}</td>
</tr>`,
  );
  return html`${filter}
${inbox.failures.map((f) => alert(`${t(`where.${f.service}`)}: ${f.refusal.message}`))}
${
  inbox.items.length === 0
    ? html`<p>${who.t("approvals.empty")}</p>`
    : scrollingTable(
        t("caption"),
        html`<table><caption>${t("caption")}</caption>
<thead><tr><th scope="col">${who.t("approvals.id")}</th><th scope="col">${t("where")}</th><th scope="col">${who.t("approvals.summary")}</th><th scope="col">${who.t("approvals.maker")}</th><th scope="col">${who.t("approvals.created")}</th><th scope="col">${who.t("approvals.expires")}</th><th scope="col">${who.t("approvals.status")}</th></tr></thead>
<tbody>${rows}</tbody></table>`,
      )
}
${inbox.more.length > 0 ? html`<nav aria-label="${who.t("pager.label")}"><ul>${inbox.more.map((m) => html`<li><a href="${`/approvals?status=${status}&service=${m.service}&cursor=${encodeURIComponent(m.cursor)}`}">${who.t("approvals.more", { service: t(`where.${m.service}`) })}</a></li>`)}</ul></nav>` : null}`;
}

/** After Approve: what the run really did, read from the approval's recorded outcome. */
function approvedBanner(who: SignedIn, a: Approval): SafeHtml | null {
  const t = ti(who);
  if (a.status !== ApprovalStatus.APPROVED) return null;
  if (a.outcome === "ok") return notice(t("ran", { what: approvalText(who.lang, a) }));
  if (a.outcome === "running" || a.outcome === "") return notice(t("running"));
  return alert(t("refused", { reason: codeText(who.lang, a.outcome) }));
}

interface DetailState {
  refusal?: Refusal | undefined;
  decision?: "approve" | "reject" | undefined;
  form?: Record<string, string> | undefined;
  /** Just approved by this operator: say what the run did. */
  approved?: boolean;
}

function detailPage(who: SignedIn, a: Approval, state: DetailState, banner: SafeHtml | null): SafeHtml {
  const pending = a.status === ApprovalStatus.PENDING;
  const own = samePerson(a.maker, who.operator.email);
  const value = (d: "approve" | "reject", name: string) => (state.decision === d ? (state.form?.[name] ?? "") : "");
  const fieldError = (d: "approve" | "reject", name: string) => (state.decision === d && state.refusal?.field === name ? state.refusal.message : undefined);
  const action = (d: "approve" | "reject") => `/approvals/${a.service}/${a.id}/${d}`;
  // The approve button is not offered to the maker; the service refuses them anyway (MAKER_CANNOT_APPROVE).
  const approveForm = own
    ? html`<p class="notice">${ti(who)("ownLine")}</p>`
    : html`<form method="post" action="${action("approve")}" class="card" aria-labelledby="h-approve">
<h3 id="h-approve">${who.t("approval.approve")}</h3>${csrfField(who)}
${field({ id: "approve-note", name: "note", label: who.t("approval.note"), value: value("approve", "note"), hint: who.t("approval.noteHint") })}
<button type="submit">${who.t("approval.approve")}</button></form>`;
  const rejectForm = html`<form method="post" action="${action("reject")}" class="card" aria-labelledby="h-reject">
<h3 id="h-reject">${own ? who.t("approval.withdraw") : who.t("approval.reject")}</h3>${csrfField(who)}
${field({ id: "reject-reason", name: "reason", label: who.t("approval.reason"), required: true, value: value("reject", "reason"), error: fieldError("reject", "reason") })}
<button type="submit">${own ? who.t("approval.withdraw") : who.t("approval.reject")}</button></form>`;
  return html`${banner}${state.approved ? approvedBanner(who, a) : null}${state.refusal ? alert(state.refusal.message) : null}
<p><a href="/approvals">${who.t("approvals.back")}</a></p>
<dl class="facts card">
<dt>${who.t("approvals.summary")}</dt><dd>${approvalText(who.lang, a)}</dd>
<dt>${ti(who)("where")}</dt><dd>${isServiceName(a.service) ? ti(who)(`where.${a.service}`) : a.service}</dd>
<dt>${who.t("approval.rpc")}</dt><dd><code>${a.rpc}</code></dd>
<dt>${who.t("approval.reasonGiven")}</dt><dd>${a.reason || "—"}</dd>
<dt>${who.t("approvals.maker")}</dt><dd>${a.maker} (${roleText(who.lang, a.makerRole)})</dd>
<dt>${who.t("approvals.created")}</dt><dd>${timeOf(a.createdAt, who.lang)}</dd>
<dt>${who.t("approvals.expires")}</dt><dd>${timeOf(a.expiresAt, who.lang)}</dd>
<dt>${who.t("approvals.status")}</dt><dd>${statusText(who, a.status)}</dd>
<dt>${who.t("approval.targets")}</dt><dd>${a.targetIds.join(", ") || "—"}</dd>
${a.decidedBy ? html`<dt>${who.t("approval.decidedBy")}</dt><dd>${a.decidedBy} · ${timeOf(a.decidedAt, who.lang)}</dd><dt>${who.t("approval.decisionNote")}</dt><dd>${a.decisionNote || "—"}</dd>` : null}
${a.outcome ? html`<dt>${who.t("approval.outcome")}</dt><dd class="${a.outcome === "ok" ? "ok" : "bad"}">${a.outcome === "ok" ? who.t("approval.outcomeOk") : a.outcome === "running" ? ti(who)("running") : ti(who)("outcomeRefused", { reason: codeText(who.lang, a.outcome) })}</dd>` : null}
</dl>
<h2 id="request-json">${who.t("approval.request")}</h2>
<pre aria-labelledby="request-json" tabindex="0"><code>${pretty(a.requestJson)}</code></pre>
${a.responseJson ? html`<h2 id="response-json">${who.t("approval.response")}</h2><pre aria-labelledby="response-json" tabindex="0"><code>${pretty(a.responseJson)}</code></pre>` : null}
${pending ? html`<h2>${who.t("approval.decide")}</h2><div class="actions">${approveForm}${rejectForm}</div>` : null}`;
}

/**
 * The approvals inbox: what waits for a second operator in each of the five services (each
 * serves its own ApprovalService), newest first; one approval with its exact request; approve
 * with a note, reject with a reason. Who may decide is the service's rule.
 */
export function approvalPages(deps: ConsoleContext): ConsoleRoute[] {
  const show = async (ctx: ConsoleContextKoa, who: SignedIn, service: ServiceName, id: string, state: DetailState, banner: SafeHtml | null, status = 200) => {
    const title = who.t("approval.title", { id });
    try {
      const { approval } = await who.client(ApprovalService, service).getApproval({ id });
      if (!approval) throw new Error("GetApproval answered no approval");
      workPage(ctx, who, { title, body: detailPage(who, approval, state, banner) }, status);
    } catch (err) {
      const refusal = refusalOf(err, who.t);
      workPage(ctx, who, { title, body: html`${alert(refusal.message)}<p><a href="/approvals">${who.t("approvals.back")}</a></p>` }, refusal.status);
    }
  };
  const target = (ctx: RouteContext): { service: ServiceName; id: string } | undefined => {
    const service = ctx.params.service;
    const id = ctx.params.id ?? "";
    return isServiceName(service) && APPROVAL_ID.test(id) ? { service, id } : undefined;
  };
  const decide = (decision: "approve" | "reject"): ConsoleRoute => (operatorRoute(deps, { method: "POST", path: `/approvals/:service/:id/${decision}` }, async (ctx, who) => {
      const found = target(ctx);
      if (!found) return notFoundPage(ctx, who);
      const form = ctx.state.form ?? {};
      const client = who.client(ApprovalService, found.service);
      try {
        if (decision === "approve") {
          const { approval, answer } = await client.approve({ id: found.id, note: (form.note ?? "").trim() });
          // A live merchant made by this approval: its secrets reach this approver here, once, and
          // are kept nowhere (the service stored its answer with them left out).
          const made = approval?.outcome === "ok" && approval.rpc === CREATE_MERCHANT && answer.length > 0 ? fromBinary(CreateMerchantResponseSchema, answer) : undefined;
          if (made?.merchant) {
            const m = made.merchant;
            return secretPage(ctx, who, who.t("merchants.created", { name: m.name }), m, createdMerchantSecrets(m, made.apiSecret, made.webhookSecret), 200, notice(who.t("approval.done.merchant")));
          }
        } else await client.reject({ id: found.id, reason: (form.reason ?? "").trim() });
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        return show(ctx, who, found.service, found.id, { refusal, decision, form }, null, refusal.status);
      }
      ctx.status = 303;
      ctx.redirect(`/approvals/${found.service}/${found.id}?done=${decision}`);
    }));

  return [
    // The console's own (`/approvals/console/:id`) before the services' `/approvals/:service/:id`.
    ...accountApprovalPages(deps),
    operatorRoute(deps, { method: "GET", path: "/approvals" }, async (ctx, who) => {
      const status = statusFilter(ctx.query.status);
      const only = isServiceName(ctx.query.service) ? ctx.query.service : undefined;
      const cursor = only ? cursorParam(ctx.query.cursor) : "";
      const inbox = await readInbox(deps, who, status, only, cursor);
      const title = only ? who.t("approvals.titleOf", { service: ti(who)(`where.${only}`) }) : who.t("approvals.title");
      workPage(ctx, who, { title, body: listPage(who, status, inbox) }, inbox.worst);
    }),
    operatorRoute(deps, { method: "GET", path: "/approvals/:service/:id" }, async (ctx, who) => {
      const found = target(ctx);
      if (!found) return notFoundPage(ctx, who);
      const done = ctx.query.done;
      // After Approve the banner is what the run did (the approval's recorded outcome), never a guess.
      await show(ctx, who, found.service, found.id, { approved: done === "approve" }, done === "reject" ? notice(who.t("approval.done.reject")) : null);
    }),
    decide("approve"),
    decide("reject"),
  ];
}
