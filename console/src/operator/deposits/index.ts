import { DepositService, DepositStatus, type Deposit, type IncomingTransfer } from "@payments/contracts/deposit";
import { DEPOSIT_STATUSES, depositStatusFromProto, depositStatusToProto, isDepositStatusName } from "@payments/contracts/statuses";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { TextKey } from "../texts/index.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import { formsUnlessWaiting } from "../approvals/waiting.js";
import type { ConsoleContextKoa } from "../../state.js";
import { answerOrRefusal, csrfField, cursorParam, ID_PATTERN, isOneOf, minorUnits, money, notFoundPage, operatorRoute, pager, type Refusal, refusalAlert, readOne, refusalOf, seeOther, type SignedIn, timeOf, waitingForApproval, workPage } from "../operator-call.js";
import { filterForm, listQueryOf, listRequest, type Filters, type ListQuery, type SearchField } from "../list-filters.js";
import { merchantNamed, named, Names } from "../directory.js";
import { matchByText, matchReasonText, scoreText } from "../../shared/match-reasons.js";
import { auditEntries, auditOf, callbacksSection, eventEntries, eventsOf, timelineSection, type TimelineEntry } from "../transaction-history.js";
import { statusText as transferStatusText } from "../transfers/index.js";

const PAGE_SIZE = 50;

/** ListDeposits' search filters, passed through as typed: the deposit service judges them. */
const SEARCH: readonly SearchField[] = [
  { name: "reference", label: "deposit.reference" },
  { name: "customer", label: "list.customerId" },
  { name: "name", label: "list.customerName", hint: "list.namePrefixHint" },
  { name: "iban", label: "list.receivingIban" },
  { name: "amount", label: "list.amount", hint: "list.amountHint" },
];

const ACTIONS = ["confirm", "reject"] as const;
type Action = (typeof ACTIONS)[number];
const isAction = (v: unknown): v is Action => isOneOf(ACTIONS, v);

export function depositStatusText(who: SignedIn, status: DepositStatus): string {
  return who.t(`deposit.status.${depositStatusFromProto(status) ?? "unknown"}`);
}

function table(who: SignedIn, names: Names, deposits: Deposit[]): SafeHtml {
  if (deposits.length === 0) return html`<p>${who.t("list.empty")}</p>`;
  return html`<table><caption>${who.t("deposits.caption")}</caption>
<thead><tr><th scope="col">${who.t("deposit.id")}</th><th scope="col">${who.t("list.merchant")}</th><th scope="col">${who.t("deposit.processId")}</th><th scope="col">${who.t("list.created")}</th><th scope="col">${who.t("list.status")}</th><th scope="col" class="num">${who.t("transfer.amount")}</th><th scope="col">${who.t("deposit.customer")}</th><th scope="col">${who.t("deposit.kind")}</th></tr></thead>
<tbody>${deposits.map(
    (d) => html`<tr><td><a href="${`/deposits/${d.id}`}">${d.id}</a></td><td>${merchantNamed(names, d.merchantId)}</td><td>${d.processId}</td><td>${timeOf(d.createdAt, who.lang)}</td><td>${depositStatusText(who, d.status)}</td><td class="num">${money(d.amount, d.currency, who.lang)}</td><td>${d.customer ? named(d.customer.name, d.customer.id) : "—"}</td><td>${d.sandbox ? who.t("kind.sandbox") : who.t("kind.live")}</td></tr>`,
  )}</tbody></table>`;
}

async function findOne(who: SignedIn, f: Filters): Promise<Deposit[] | Refusal> {
  const deposits = who.client(DepositService);
  try {
    return [(await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: f.q } })).deposit!];
  } catch (err) {
    const refusal = refusalOf(err, who.t);
    if (refusal.status !== 404 && refusal.status !== 400) return refusal;
  }
  if (!f.merchant) return [];
  try {
    return [(await deposits.getDeposit({ merchantId: f.merchant, key: { case: "processId", value: f.q } })).deposit!];
  } catch (err) {
    const refusal = refusalOf(err, who.t);
    return refusal.status === 404 || refusal.status === 400 ? [] : refusal;
  }
}

/** One page of ListDeposits with the form's filters, of the mode shown (sandbox or live). */
function listPage(who: SignedIn, q: ListQuery): Promise<{ deposits: Deposit[]; nextCursor: string } | Refusal> {
  const status = isDepositStatusName(q.f.status) ? depositStatusToProto(q.f.status) : DepositStatus.UNSPECIFIED;
  const search = { reference: q.f.reference, customerId: q.f.customer, customerName: q.f.name, accountIban: q.f.iban };
  return answerOrRefusal(who, () => who.client(DepositService).listDeposits({ ...listRequest(q, PAGE_SIZE), status, ...search }));
}

interface DetailState {
  refusal?: Refusal | undefined;
  action?: Action | undefined;
  form?: Record<string, string> | undefined;
}

function actions(who: SignedIn, d: Deposit, state: DetailState): SafeHtml | null {
  // Offered by role as a convenience only: the deposit service decides, and says no.
  if (d.status !== DepositStatus.PENDING || !roleAtLeast(who.operator.role, "operator")) return null;
  const mine = (a: Action) => state.action === a;
  const err = (a: Action, ...names: string[]) => (mine(a) && state.refusal?.field && names.includes(state.refusal.field) ? state.refusal.message : undefined);
  const value = (a: Action, name: string) => (mine(a) ? (state.form?.[name] ?? "") : "");
  return html`<h2>${who.t("deposit.decide")}</h2><div class="actions">
<form method="post" action="${`/deposits/${d.id}/confirm`}" class="card" aria-labelledby="h-confirm">
<h3 id="h-confirm">${who.t("deposit.confirm")}</h3>${csrfField(who)}
${field({ id: "confirm-amount", name: "amount", label: who.t("deposit.confirmAmount"), value: value("confirm", "amount"), hint: who.t("deposit.confirmAmountHint", { amount: money(d.requestedAmount, d.currency, who.lang) }), error: err("confirm", "amount"), inputmode: "decimal" })}
${field({ id: "confirm-transfer", name: "transferId", label: who.t("deposit.transferId"), value: value("confirm", "transferId"), hint: who.t("deposit.transferIdHint"), error: err("confirm", "transfer_id") })}
<button type="submit">${who.t("deposit.confirm")}</button>
</form>
<form method="post" action="${`/deposits/${d.id}/reject`}" class="card" aria-labelledby="h-reject">
<h3 id="h-reject">${who.t("deposit.reject")}</h3>${csrfField(who)}
${field({ id: "reject-reason", name: "reason", label: who.t("transfer.decisionReason"), required: true, value: value("reject", "reason"), error: err("reject", "reason") })}
<button type="submit">${who.t("deposit.reject")}</button>
</form></div>`;
}

function transfersSection(who: SignedIn, transfers: IncomingTransfer[]): SafeHtml | null {
  if (transfers.length === 0) return html`<h2>${who.t("deposit.paidBy")}</h2><p>${who.t("deposit.noTransfer")}</p>`;
  return html`<h2>${who.t("deposit.paidBy")}</h2><table><caption>${who.t("deposit.paidByCaption")}</caption>
<thead><tr><th scope="col">${who.t("transfer.id")}</th><th scope="col">${who.t("transfer.reportedAt")}</th><th scope="col">${who.t("transfer.status")}</th><th scope="col" class="num">${who.t("transfer.amount")}</th><th scope="col">${who.t("transfer.sender")}</th><th scope="col">${who.t("transfer.reference")}</th></tr></thead>
<tbody>${transfers.map((tr) => html`<tr><td><a href="${`/transfers/${tr.id}`}">${tr.id}</a></td><td>${timeOf(tr.reportedAt, who.lang)}</td><td>${transferStatusText(who, tr.status)}</td><td class="num">${money(tr.amount, tr.currency, who.lang)}</td><td>${tr.senderName || "—"}</td><td>${tr.reference || "—"}</td></tr>`)}</tbody></table>`;
}

/**
 * Deposits: the list with ListDeposits' filters (one merchant or all, status, created from/to in
 * Türkiye days, reference, customer id or name prefix, receiving IBAN, amount) paged by the
 * service's cursor, and a search by id (or process id with the merchant); one deposit with its
 * timeline, the transfer that paid it and its callbacks; an operator's confirm or reject through
 * the deposit service.
 */
export function depositPages(deps: ConsoleContext): ConsoleRoute[] {
  const showDetail = async (ctx: ConsoleContextKoa, who: SignedIn, id: string, state: DetailState, banner: SafeHtml | null, status = 200) => {
    const title = who.t("deposit.title", { id });
    const back = html`<p><a href="/deposits">${who.t("deposits.back")}</a></p>`;
    const deposit = await readOne(ctx, who, { title, back, id }, async () => (await who.client(DepositService).getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })).deposit);
    if (!deposit) return;
    const [events, audit, names] = await Promise.all([eventsOf(who, id), auditOf(who, "deposit", id), Names.of(deps, who).then((n) => n.ensure({ merchants: [deposit.merchantId] }))]);
    // The deposit names no transfer: the ones operators tied to it are in the audit (trf_… targets).
    const transferIds = Array.isArray(audit) ? [...new Set(audit.flatMap((r) => (r.outcome === "ok" ? r.targetIds.filter((t) => t.startsWith("trf_")) : [])))] : [];
    const transfers = (
      await Promise.all(transferIds.map((transferId) => who.client(DepositService).getTransfer({ transferId }).then((r) => r.transfer, () => undefined)))
    ).filter((t): t is IncomingTransfer => t !== undefined && t.depositId === id);
    const entries: TimelineEntry[] = [{ at: deposit.createdAt, what: who.t("history.created"), detail: money(deposit.requestedAmount, deposit.currency, who.lang) }, ...eventEntries(who, events), ...auditEntries(audit, who.lang)];
    for (const tr of transfers) entries.push({ at: tr.reportedAt, what: who.t("history.transferReported", { id: tr.id }), detail: money(tr.amount, tr.currency, who.lang) });
    if (deposit.completedAt && (!Array.isArray(events) || events.length === 0)) entries.push({ at: deposit.completedAt, what: depositStatusText(who, deposit.status) });
    const d = deposit;
    const generalError = state.refusal && !state.refusal.approvalId ? alert(state.refusal.message) : null;
    workPage(
      ctx,
      who,
      {
        title,
        body: html`${banner}${generalError}<p><a href="/deposits">${who.t("deposits.back")}</a></p>
<dl class="facts card">
<dt>${who.t("list.status")}</dt><dd>${depositStatusText(who, d.status)}${d.latePayment ? html` (${who.t("transfer.late")})` : null}</dd>
<dt>${who.t("list.merchant")}</dt><dd>${merchantNamed(names, d.merchantId)}</dd>
<dt>${who.t("deposit.processId")}</dt><dd>${d.processId}</dd>
<dt>${who.t("deposit.kind")}</dt><dd>${d.sandbox ? who.t("kind.sandbox") : who.t("kind.live")}</dd>
<dt>${who.t("transfer.amount")}</dt><dd>${money(d.amount, d.currency, who.lang)}</dd>
<dt>${who.t("deposit.requested")}</dt><dd>${money(d.requestedAmount, d.currency, who.lang)}</dd>
<dt>${who.t("deposit.reference")}</dt><dd><code>${d.reference}</code></dd>
<dt>${who.t("deposit.customer")}</dt><dd>${d.customer ? html`${named(d.customer.name, d.customer.id)}${d.customer.username ? html` · ${d.customer.username}` : null}` : "—"}</dd>
<dt>${who.t("transfer.receivingIban")}</dt><dd>${d.assignedAccount ? html`${d.assignedAccount.accountName || names.account(d.assignedAccount.iban)?.accountName || ""} · ${d.assignedAccount.bankName} <small><code class="id">${d.assignedAccount.iban}</code></small>` : "—"}</dd>
<dt>${who.t("transfer.score")}</dt><dd>${d.matchBy ? `${matchByText(who.lang, d.matchBy)} ${scoreText(who.lang, d.matchScore)} (${d.matchReasons.map((r) => matchReasonText(who.lang, r)).join(", ")})` : "—"}</dd>
<dt>${who.t("deposit.failureReason")}</dt><dd>${d.failureReason || "—"}</dd>
<dt>${who.t("list.created")}</dt><dd>${timeOf(d.createdAt, who.lang)}</dd>
<dt>${who.t("deposit.expires")}</dt><dd>${timeOf(d.expiresAt, who.lang) ?? "—"}</dd>
<dt>${who.t("deposit.final")}</dt><dd>${timeOf(d.completedAt, who.lang) ?? "—"}</dd>
</dl>
${await formsUnlessWaiting(who, ["deposit"], d.id, actions(who, d, state))}
${timelineSection(who, entries, Array.isArray(audit) ? undefined : audit)}
${transfersSection(who, transfers)}
${callbacksSection(who, events)}`,
      },
      status,
    );
  };

  const act = (action: Action): ConsoleRoute => (operatorRoute(deps, { method: "POST", path: `/deposits/:id/${action}` }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      const form = ctx.state.form ?? {};
      if (!ID_PATTERN.test(id)) return notFoundPage(ctx, who);
      const invalid = (field: string, key: TextKey) => showDetail(ctx, who, id, { action, form, refusal: { status: 400, message: who.t(key), reason: "VALIDATION_ERROR", field, approvalId: undefined } }, null, 400);
      try {
        if (action === "confirm") {
          const amountText = (form.amount ?? "").trim();
          const amount = amountText ? minorUnits(amountText, who.lang) : undefined;
          if (amountText && amount === undefined) return await invalid("amount", "deposit.badAmount");
          const transferId = (form.transferId ?? "").trim();
          if (transferId && !ID_PATTERN.test(transferId)) return await invalid("transfer_id", "deposit.badTransfer");
          await who.client(DepositService).confirmDeposit({ depositId: id, ...(amount !== undefined ? { amount } : {}), transferId });
        } else {
          const reason = (form.reason ?? "").trim();
          if (!reason) return await invalid("reason", "transfer.reasonRequired");
          await who.client(DepositService).rejectDeposit({ depositId: id, reason });
        }
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        if (refusal.approvalId) return seeOther(ctx, `/deposits/${id}?approval=${encodeURIComponent(refusal.approvalId)}`);
        return showDetail(ctx, who, id, { action, form, refusal }, null, refusal.status);
      }
      seeOther(ctx, `/deposits/${id}?done=${action}`);
    }));

  return [
    operatorRoute(deps, { method: "GET", path: "/deposits" }, async (ctx, who) => {
      const q = listQueryOf(ctx, who);
      const { f, sandbox, invalid } = q;
      const listing: Promise<Deposit[] | Refusal | { deposits: Deposit[]; nextCursor: string }> = invalid.size > 0 ? Promise.resolve([]) : f.q ? findOne(who, f) : listPage(who, q);
      const [names, found] = await Promise.all([Names.of(deps, who), listing]);
      const deposits = "message" in found ? [] : Array.isArray(found) ? found : found.deposits;
      await names.ensure({ merchants: [f.merchant, ...deposits.map((d) => d.merchantId)] });
      const form = filterForm(who, { names, sandbox }, "/deposits", f, DEPOSIT_STATUSES, (s) => who.t(`deposit.status.${s}`), invalid, SEARCH);
      const page = (body: SafeHtml, status = 200) => workPage(ctx, who, { title: who.t("deposits.title"), body: html`<p>${who.t("deposits.intro")}</p>${form}${body}` }, status);
      if (invalid.size > 0) return page(html``, 400);
      if ("message" in found) return page(refusalAlert(found), found.status);
      if (Array.isArray(found)) return page(html`${found.length === 0 && !f.merchant ? html`<p class="hint">${who.t("list.processIdNeedsMerchant")}</p>` : null}${table(who, names, found)}`);
      page(html`${table(who, names, deposits)}${pager(who, "/deposits", { ...f }, q.cursor, found.nextCursor)}`);
    }),
    operatorRoute(deps, { method: "GET", path: "/deposits/:id", ids: ["id"] }, async (ctx, who, { id }) => {
      const approval = cursorParam(ctx.query.approval);
      const done = ctx.query.done;
      const banner = approval ? waitingForApproval(who, "deposit", approval) : isAction(done) ? notice(who.t(done === "confirm" ? "deposit.done.confirm" : "deposit.done.reject")) : null;
      await showDetail(ctx, who, id, {}, banner);
    }),
    act("confirm"),
    act("reject"),
  ];
}
