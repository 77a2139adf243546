import { DepositService, type IncomingTransfer } from "@payments/contracts/deposit";
import { PayoutService, TransferReturnStatus, type TransferReturn } from "@payments/contracts/payout";
import { TRANSFER_RETURN_STATUSES, transferReturnStatusFromProto, transferReturnStatusToProto } from "@payments/contracts/statuses";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { ageOf, csrfField, cursorParam, ID_PATTERN, isOneOf, linkTo, money, notFoundPage, operatorRoute, pager, type Refusal, refusalAlert, refusalOf, scrollingTable, seeOther, type SignedIn, timeOf, workPage } from "../operator-call.js";
import { actorNamed, Names } from "../directory.js";
import { returnTexts, type ReturnTextKey } from "./texts.js";

const PAGE_SIZE = 50;
/** Every attempt of one transfer fits in one page (ListTransferReturns' largest). */
const ATTEMPTS_READ = 100;

const FILTERS = ["awaiting", "all", ...TRANSFER_RETURN_STATUSES] as const;
type Filter = (typeof FILTERS)[number];

const ACTIONS = ["complete", "fail"] as const;
type Action = (typeof ACTIONS)[number];

type T = (key: ReturnTextKey, params?: Record<string, string | number>) => string;
const textsOf = (who: SignedIn): T => (key, params) => returnTexts(who.lang, key, params);

function statusText(t: T, r: TransferReturn): string {
  const base = t(`status.${transferReturnStatusFromProto(r.status) ?? "unknown"}`);
  if (r.status === TransferReturnStatus.FAILED && r.failureReason) return `${base} (${r.failureReason})`;
  if (r.awaitingOperator) return `${base} (${t("awaiting")})`;
  return base;
}

/** Finance decides a live return the connector left to people; the form is offered by role only, the payout service decides. */
function decidable(r: TransferReturn): boolean {
  return r.status === TransferReturnStatus.PROCESSING && r.awaitingOperator;
}

function filterForm(t: T, chosen: Filter): SafeHtml {
  const label = (f: Filter) => (f === "awaiting" ? t("filter.awaiting") : f === "all" ? t("filter.all") : t(`status.${f}`));
  return html`<form method="get" action="/transfer-returns" class="filters"><div><label for="filter-status">${t("filter.label")}</label>
<select id="filter-status" name="status">${FILTERS.map((f) => html`<option value="${f}"${f === chosen ? html` selected` : null}>${label(f)}</option>`)}</select></div>
<button type="submit">${t("filter.show")}</button></form>`;
}

function listTable(who: SignedIn, t: T, returns: TransferReturn[], caption: string, now: Date, names: Names): SafeHtml {
  return scrollingTable(
    caption,
    html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">${t("recipient")}</th><th scope="col" class="num">${t("amount")}</th><th scope="col">${t("iban")}</th><th scope="col">${t("status")}</th><th scope="col">${t("kind")}</th><th scope="col">${t("why")}</th><th scope="col">${t("askedBy")}</th><th scope="col">${t("created")}</th><th scope="col">${t("transfer")}</th></tr></thead>
<tbody>${returns.map(
      (r) => html`<tr><th scope="row"><a href="${`/transfer-returns/${r.transferId}`}">${r.recipientName || "—"}</a></th><td class="num">${money(r.amount, r.currency, who.lang)}</td><td><code>${r.iban}</code></td><td>${statusText(t, r)}</td><td>${r.sandbox ? t("sandbox") : t("live")}</td><td>${r.reason || "—"}</td><td>${actorNamed(names, r.actor)}</td><td>${timeOf(r.createdAt, who.lang)} (${ageOf(r.createdAt, now, who.t)})</td><td><a href="${`/transfer-returns/${r.transferId}`}">${r.transferId}</a></td></tr>`,
    )}</tbody></table>`,
  );
}

interface DecideState {
  returnId?: string;
  action?: Action;
  form?: Record<string, string>;
  refusal?: Refusal;
}

function decideForms(who: SignedIn, t: T, r: TransferReturn, state: DecideState): SafeHtml | null {
  if (!decidable(r)) return null;
  if (!roleAtLeast(who.operator.role, "finance")) return html`<p class="hint">${t("decide.onlyFinance")}</p>`;
  const mine = (a: Action) => state.returnId === r.id && state.action === a;
  const err = (a: Action, ...names: string[]) => (mine(a) && state.refusal?.field && names.includes(state.refusal.field) ? state.refusal.message : undefined);
  const action = (a: Action) => `/transfer-returns/${r.transferId}/${r.id}/${a}`;
  return html`<h3>${t("decide.title")}</h3><p>${t("decide.intro")}</p><div class="actions">
<form method="post" action="${action("complete")}" class="card" aria-labelledby="${`h-complete-${r.id}`}"><h4 id="${`h-complete-${r.id}`}">${t("complete.title")}</h4>${csrfField(who)}
${field({ id: `complete-ref-${r.id}`, name: "bankReference", label: t("bankReference"), required: true, value: mine("complete") ? (state.form?.bankReference ?? "") : "", hint: t("complete.hint"), error: err("complete", "bank_reference", "bankReference") })}
<button type="submit">${t("complete.title")}</button></form>
<form method="post" action="${action("fail")}" class="card" aria-labelledby="${`h-fail-${r.id}`}"><h4 id="${`h-fail-${r.id}`}">${t("fail.title")}</h4>${csrfField(who)}
${field({ id: `fail-reason-${r.id}`, name: "reason", label: t("fail.reason"), required: true, value: mine("fail") ? (state.form?.reason ?? "") : "", hint: t("fail.hint"), error: err("fail", "reason") })}
<button type="submit">${t("fail.title")}</button></form></div>`;
}

function attemptCard(who: SignedIn, t: T, r: TransferReturn, state: DecideState, names: Names): SafeHtml {
  return html`<section class="card" aria-labelledby="${`h-${r.id}`}" id="${r.id}"><h2 id="${`h-${r.id}`}">${t("detail.attemptTitle", { n: r.attempt, amount: money(r.amount, r.currency, who.lang), name: r.recipientName || "—" })}</h2>
<dl class="facts">
<dt>${t("status")}</dt><dd>${statusText(t, r)}</dd>
<dt>${t("recipient")}</dt><dd>${r.recipientName || "—"}</dd>
<dt>${t("iban")}</dt><dd><code>${r.iban}</code></dd>
<dt>${t("amount")}</dt><dd>${money(r.amount, r.currency, who.lang)}</dd>
<dt>${t("kind")}</dt><dd>${r.sandbox ? t("sandbox") : t("live")}</dd>
<dt>${t("why")}</dt><dd>${r.reason || "—"}</dd>
<dt>${t("askedBy")}</dt><dd>${actorNamed(names, r.actor)}</dd>
<dt>${t("bankReference")}</dt><dd>${r.bankReference || "—"}</dd>
<dt>${t("failureReason")}</dt><dd>${r.failureReason || "—"}</dd>
<dt>${t("created")}</dt><dd>${timeOf(r.createdAt, who.lang)}</dd>
<dt>${t("updated")}</dt><dd>${timeOf(r.updatedAt, who.lang) ?? "—"}</dd>
<dt>${t("completed")}</dt><dd>${timeOf(r.completedAt, who.lang) ?? "—"}</dd>
<dt>${t("attempt")}</dt><dd>${r.attempt} · <code>${r.id}</code></dd>
</dl>
${decideForms(who, t, r, state)}</section>`;
}

function transferFacts(who: SignedIn, t: T, transfer: IncomingTransfer | undefined): SafeHtml | null {
  if (!transfer) return null;
  return html`<dl class="facts card"><dt>${t("detail.sender")}</dt><dd>${transfer.senderName || "—"}${transfer.senderIban ? html` · <code>${transfer.senderIban}</code>` : null}</dd>
<dt>${t("detail.transferAmount")}</dt><dd>${money(transfer.amount, transfer.currency, who.lang)}</dd>
<dt>${t("detail.reference")}</dt><dd>${transfer.reference || "—"}</dd>
<dt>${t("detail.transfer")}</dt><dd><a href="${`/transfers/${transfer.id}`}">${transfer.id}</a></dd></dl>`;
}

/**
 * Transfer returns (the CLI's `transfer-return`): the queue of live returns the connector left to
 * an operator (and every return by status), one transfer's returns with every attempt, and
 * finance's decision on one waiting: paid (the bank's reference) or failed (a reason code). The
 * payout service decides who may; the forms are hidden from other roles only as a convenience.
 */
export function transferReturnPages(deps: ConsoleContext): ConsoleRoute[] {
  const showDetail = async (ctx: ConsoleContextKoa, who: SignedIn, transferId: string, state: DecideState, banner: SafeHtml | null, status = 200) => {
    const t = textsOf(who);
    const title = t("detail.title", { id: transferId });
    const links = html`<p><a href="/transfer-returns">${t("detail.back")}</a> · <a href="${`/transfers/${transferId}`}">${t("detail.toTransfer")}</a></p>`;
    let returns: TransferReturn[];
    try {
      returns = (await who.client(PayoutService).listTransferReturns({ transferId, limit: ATTEMPTS_READ })).transferReturns;
    } catch (err) {
      const refusal = refusalOf(err, who.t);
      return workPage(ctx, who, { title, body: html`${refusalAlert(refusal)}${links}` }, refusal.status);
    }
    if (returns.length === 0) return workPage(ctx, who, { title, body: html`${alert(t("detail.none"))}${links}` }, 404);
    // The transfer's sender and description, when the deposit service shows them to this operator.
    const transfer = await who
      .client(DepositService)
      .getTransfer({ transferId })
      .then((res) => res.transfer)
      .catch(() => undefined);
    const names = await Names.of(deps, who);
    const refused = state.refusal ? alert(state.refusal.message) : null;
    workPage(ctx, who, { title, body: html`${banner}${refused}${links}<p>${t("detail.intro")}</p>${transferFacts(who, t, transfer)}${returns.map((r) => attemptCard(who, t, r, state, names))}` }, status);
  };

  const act = (action: Action): ConsoleRoute => (operatorRoute(deps, { method: "POST", path: `/transfer-returns/:transferId/:id/${action}` }, async (ctx, who) => {
      const t = textsOf(who);
      const transferId = ctx.params.transferId ?? "";
      const id = ctx.params.id ?? "";
      if (!ID_PATTERN.test(transferId) || !ID_PATTERN.test(id)) return notFoundPage(ctx, who);
      const form = ctx.state.form ?? {};
      const again = (refusal: Refusal) => showDetail(ctx, who, transferId, { returnId: id, action, form, refusal }, null, refusal.status);
      const payouts = who.client(PayoutService);
      try {
        if (action === "complete") {
          const bankReference = (form.bankReference ?? "").trim();
          if (!bankReference) return await again({ status: 400, message: t("complete.required"), reason: "VALIDATION_ERROR", field: "bank_reference", approvalId: undefined });
          await payouts.completeTransferReturn({ id, bankReference });
        } else {
          const reason = (form.reason ?? "").trim();
          if (!reason) return await again({ status: 400, message: t("fail.required"), reason: "VALIDATION_ERROR", field: "reason", approvalId: undefined });
          await payouts.failTransferReturn({ id, reason });
        }
      } catch (err) {
        return again(refusalOf(err, who.t));
      }
      seeOther(ctx, linkTo(`/transfer-returns/${transferId}`, { done: action, id }));
    }));

  return [
    operatorRoute(deps, { method: "GET", path: "/transfer-returns" }, async (ctx, who) => {
      const t = textsOf(who);
      const chosen: Filter = isOneOf(FILTERS, ctx.query.status) ? ctx.query.status : "awaiting";
      const cursor = cursorParam(ctx.query.cursor);
      const page = (body: SafeHtml, status = 200) => workPage(ctx, who, { title: t("title"), body: html`<p>${t("intro")}</p>${filterForm(t, chosen)}${body}` }, status);
      try {
        const statusFilter = chosen === "awaiting" || chosen === "all" ? TransferReturnStatus.UNSPECIFIED : transferReturnStatusToProto(chosen);
        const res = await who.client(PayoutService).listTransferReturns({ status: statusFilter, awaitingOperator: chosen === "awaiting", limit: PAGE_SIZE, cursor });
        const caption = chosen === "awaiting" ? t("queueCaption") : t("caption");
        const empty = html`<p>${chosen === "awaiting" ? t("queueEmpty") : t("empty")}</p>`;
        const table = res.transferReturns.length === 0 ? empty : listTable(who, t, res.transferReturns, caption, deps.clock.now(), await Names.of(deps, who));
        page(html`${table}${pager(who, "/transfer-returns", { status: chosen }, cursor, res.nextCursor)}`);
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        page(refusalAlert(refusal), refusal.status);
      }
    }),
    operatorRoute(deps, { method: "GET", path: "/transfer-returns/:transferId", ids: ["transferId"] }, async (ctx, who, { transferId }) => {
      const t = textsOf(who);
      const done = ctx.query.done;
      const id = cursorParam(ctx.query.id);
      const banner = isOneOf(ACTIONS, done) ? notice(t(done === "complete" ? "done.complete" : "done.fail", { id })) : null;
      await showDetail(ctx, who, transferId, {}, banner);
    }),
    act("complete"),
    act("fail"),
  ];
}
