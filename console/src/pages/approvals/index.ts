import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { CreateMerchantResponseSchema, MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus, type Approval } from "@payments/contracts/operator";
import { APPROVAL_STATUSES, approvalStatusFromProto, approvalStatusToProto, isApprovalStatusName } from "@payments/contracts/statuses";
import { samePerson } from "../../auth/approvals.js";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../html.js";
import { alert, field, notice } from "../../layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ServiceName } from "../../service-clients.js";
import type { ConsoleContextKoa, RouteContext } from "../../state.js";
import { createdMerchantSecrets, secretPage } from "../merchants/index.js";
import { accountApprovalPages, accountApprovalsSection } from "./console-approvals.js";
import { csrfField, cursorParam, isServiceName, refusalOf, scrollingTable, SERVICES, signedIn, timeOf, workPage, type Refusal, type SignedIn, notFoundPage } from "../operator-call.js";

const PAGE_SIZE = 50;

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

const link = (a: Approval) => `/approvals/${a.service}/${a.id}`;

/** A stored request's JSON, indented for reading; as it is when it is not JSON. */
function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

function listPage(who: SignedIn, status: StatusFilter, approvals: Approval[], more: Array<{ service: ServiceName; cursor: string }>, failures: Array<{ service: ServiceName; refusal: Refusal }>): SafeHtml {
  const filter = html`<form method="get" action="/approvals" class="filters">
<div><label for="field-status">${who.t("approvals.status")}</label>
<select id="field-status" name="status">${STATUS_FILTERS.map((s) => html`<option value="${s}"${s === status ? html` selected` : null}>${who.t(`approvals.filter.${s}`)}</option>`)}</select></div>
<button type="submit">${who.t("approvals.show")}</button>
</form>`;
  const rows = approvals.map(
    (a) => html`<tr>
<td><a href="${link(a)}">${a.id}</a></td>
<td>${a.service}</td>
<td>${a.summary}</td>
<td>${a.maker}${samePerson(a.maker, who.operator.email) ? html` (${who.t("approvals.you")})` : null}</td>
<td>${timeOf(a.createdAt, who.lang)}</td>
<td>${timeOf(a.expiresAt, who.lang)}</td>
<td>${statusText(who, a.status)}</td>
</tr>`,
  );
  return html`${filter}
${failures.map((f) => alert(`${f.service}: ${f.refusal.message}`))}
${
  approvals.length === 0
    ? html`<p>${who.t("approvals.empty")}</p>`
    : scrollingTable(
        who.t("approvals.caption"),
        html`<table><caption>${who.t("approvals.caption")}</caption>
<thead><tr><th scope="col">${who.t("approvals.id")}</th><th scope="col">${who.t("approvals.service")}</th><th scope="col">${who.t("approvals.summary")}</th><th scope="col">${who.t("approvals.maker")}</th><th scope="col">${who.t("approvals.created")}</th><th scope="col">${who.t("approvals.expires")}</th><th scope="col">${who.t("approvals.status")}</th></tr></thead>
<tbody>${rows}</tbody></table>`,
      )
}
${more.length > 0 ? html`<nav aria-label="${who.t("pager.label")}"><ul>${more.map((m) => html`<li><a href="${`/approvals?status=${status}&service=${m.service}&cursor=${encodeURIComponent(m.cursor)}`}">${who.t("approvals.more", { service: m.service })}</a></li>`)}</ul></nav>` : null}`;
}

interface DetailState {
  refusal?: Refusal | undefined;
  decision?: "approve" | "reject" | undefined;
  form?: Record<string, string> | undefined;
}

function detailPage(who: SignedIn, a: Approval, state: DetailState, banner: SafeHtml | null): SafeHtml {
  const pending = a.status === ApprovalStatus.PENDING;
  const own = samePerson(a.maker, who.operator.email);
  const value = (d: "approve" | "reject", name: string) => (state.decision === d ? (state.form?.[name] ?? "") : "");
  const fieldError = (d: "approve" | "reject", name: string) => (state.decision === d && state.refusal?.field === name ? state.refusal.message : undefined);
  const action = (d: "approve" | "reject") => `/approvals/${a.service}/${a.id}/${d}`;
  // The approve button is not offered to the maker; the service refuses them anyway (MAKER_CANNOT_APPROVE).
  const approveForm = own
    ? html`<p class="notice">${who.t("approval.ownWaiting")}</p>`
    : html`<form method="post" action="${action("approve")}" class="card" aria-labelledby="h-approve">
<h3 id="h-approve">${who.t("approval.approve")}</h3>${csrfField(who)}
${field({ id: "approve-note", name: "note", label: who.t("approval.note"), value: value("approve", "note"), hint: who.t("approval.noteHint") })}
<button type="submit">${who.t("approval.approve")}</button></form>`;
  const rejectForm = html`<form method="post" action="${action("reject")}" class="card" aria-labelledby="h-reject">
<h3 id="h-reject">${own ? who.t("approval.withdraw") : who.t("approval.reject")}</h3>${csrfField(who)}
${field({ id: "reject-reason", name: "reason", label: who.t("approval.reason"), required: true, value: value("reject", "reason"), error: fieldError("reject", "reason") })}
<button type="submit">${own ? who.t("approval.withdraw") : who.t("approval.reject")}</button></form>`;
  return html`${banner}${state.refusal ? alert(state.refusal.message) : null}
<p><a href="/approvals">${who.t("approvals.back")}</a></p>
<dl class="facts card">
<dt>${who.t("approvals.summary")}</dt><dd>${a.summary}</dd>
<dt>${who.t("approvals.service")}</dt><dd>${a.service}</dd>
<dt>${who.t("approval.rpc")}</dt><dd><code>${a.rpc}</code></dd>
<dt>${who.t("approval.reasonGiven")}</dt><dd>${a.reason || "—"}</dd>
<dt>${who.t("approvals.maker")}</dt><dd>${a.maker} (${a.makerRole})</dd>
<dt>${who.t("approvals.created")}</dt><dd>${timeOf(a.createdAt, who.lang)}</dd>
<dt>${who.t("approvals.expires")}</dt><dd>${timeOf(a.expiresAt, who.lang)}</dd>
<dt>${who.t("approvals.status")}</dt><dd>${statusText(who, a.status)}</dd>
<dt>${who.t("approval.targets")}</dt><dd>${a.targetIds.join(", ") || "—"}</dd>
${a.decidedBy ? html`<dt>${who.t("approval.decidedBy")}</dt><dd>${a.decidedBy} · ${timeOf(a.decidedAt, who.lang)}</dd><dt>${who.t("approval.decisionNote")}</dt><dd>${a.decisionNote || "—"}</dd>` : null}
${a.outcome ? html`<dt>${who.t("approval.outcome")}</dt><dd class="${a.outcome === "ok" ? "ok" : "bad"}">${a.outcome === "ok" ? who.t("approval.outcomeOk") : a.outcome}</dd>` : null}
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
  const decide = (decision: "approve" | "reject"): ConsoleRoute => ({
    method: "POST",
    path: `/approvals/:service/:id/${decision}`,
    access: "operator",
    handler: async (ctx) => {
      const who = signedIn(deps, ctx);
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
    },
  });

  return [
    // The console's own (`/approvals/console/:id`) before the services' `/approvals/:service/:id`.
    ...accountApprovalPages(deps),
    {
      method: "GET",
      path: "/approvals",
      access: "operator",
      handler: async (ctx) => {
        const who = signedIn(deps, ctx);
        const status = statusFilter(ctx.query.status);
        const only = isServiceName(ctx.query.service) ? ctx.query.service : undefined;
        const cursor = only ? cursorParam(ctx.query.cursor) : "";
        const answers = await Promise.all(
          (only ? [only] : SERVICES).map(async (service) => {
            try {
              const page = await who.client(ApprovalService, service).listApprovals({ status: status === "all" ? ApprovalStatus.UNSPECIFIED : approvalStatusToProto(status), limit: PAGE_SIZE, cursor });
              return { service, approvals: page.approvals, next: page.nextCursor };
            } catch (err) {
              return { service, refusal: refusalOf(err, who.t) };
            }
          }),
        );
        const approvals = answers.flatMap((a) => a.approvals ?? []).sort((x, y) => (y.createdAt ? timestampDate(y.createdAt).getTime() : 0) - (x.createdAt ? timestampDate(x.createdAt).getTime() : 0));
        const more = answers.filter((a) => a.next).map((a) => ({ service: a.service, cursor: a.next ?? "" }));
        const failures = answers.flatMap((a) => (a.refusal ? [{ service: a.service, refusal: a.refusal }] : []));
        const worst = failures.length === answers.length ? (failures[0]?.refusal.status ?? 200) : 200;
        // An admin also sees the console's own account changes (only on the page of every service).
        const accounts = only ? null : await accountApprovalsSection(deps, who, status);
        workPage(ctx, who, { title: only ? who.t("approvals.titleOf", { service: only }) : who.t("approvals.title"), body: html`${listPage(who, status, approvals, more, failures)}${accounts}` }, worst);
      },
    },
    {
      method: "GET",
      path: "/approvals/:service/:id",
      access: "operator",
      handler: async (ctx) => {
        const who = signedIn(deps, ctx);
        const found = target(ctx);
        if (!found) return notFoundPage(ctx, who);
        const done = ctx.query.done;
        const banner = done === "approve" ? notice(who.t("approval.done.approve")) : done === "reject" ? notice(who.t("approval.done.reject")) : null;
        await show(ctx, who, found.service, found.id, {}, banner);
      },
    },
    decide("approve"),
    decide("reject"),
  ];
}
