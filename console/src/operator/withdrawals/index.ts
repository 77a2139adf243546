import { PassThrough } from "node:stream";
import { stringify } from "csv-stringify";
import { PayoutService, WithdrawalStatus, type Withdrawal } from "@payments/contracts/payout";
import { WITHDRAWAL_STATUSES, isWithdrawalStatusName, withdrawalStatusFromProto, withdrawalStatusToProto, type WithdrawalStatusName } from "@payments/contracts/statuses";
import { majorUnits } from "@payments/kit";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import { formsUnlessWaiting } from "../approvals/waiting.js";
import type { ConsoleContextKoa } from "../../state.js";
import { ageOf, answerOrRefusal, csrfField, cursorParam, ID_PATTERN, isOneOf, money, notFoundPage, operatorRoute, pager, type Refusal, refusalAlert, readOne, refusalOf, seeOther, type SignedIn, timeOf, waitingForApproval, workPage } from "../operator-call.js";
import { filterForm, listQueryOf, listRequest, type Filters, type ListQuery, type SearchField } from "../list-filters.js";
import { bankNamed, merchantNamed, named, Names } from "../directory.js";
import { sandboxFilter } from "../../shared/mode.js";
import { auditEntries, auditOf, callbacksSection, eventEntries, eventsOf, timelineSection, type TimelineEntry } from "../transaction-history.js";

const PAGE_SIZE = 50;

/** ListWithdrawals' search filters, passed through as typed: the payout service judges them. */
const SEARCH: readonly SearchField[] = [
  { name: "iban", label: "list.iban" },
  { name: "name", label: "list.holderName", hint: "list.namePrefixHint" },
  { name: "amount", label: "list.amount", hint: "list.amountHint" },
];
/** ListWithdrawals' largest page, for the bank file that takes every one. */
const EXPORT_PAGE = 100;

const ACTIONS = ["complete", "fail"] as const;
type Action = (typeof ACTIONS)[number];
const isAction = (v: unknown): v is Action => isOneOf(ACTIONS, v);

/** The bank's bulk-payment file's columns (the CLI's `withdrawal export`: the same file), by language. */
const BANK_FILE_HEADERS = { en: ["Recipient name", "IBAN", "Amount", "Description"], tr: ["Alıcı adı", "IBAN", "Tutar", "Açıklama"] } as const;
const BANK_FILE_DIALECT = { en: { delimiter: ",", decimal: "." }, tr: { delimiter: ";", decimal: "," } } as const;
/** Excel reads the file as UTF-8 (the Turkish letters of names) only with it. */
const BOM = "\uFEFF";

function statusText(who: SignedIn, w: Withdrawal): string {
  const base = who.t(`withdrawal.status.${withdrawalStatusFromProto(w.status) ?? "unknown"}`);
  if (w.status === WithdrawalStatus.FAILED && w.failureReason) return `${base} (${w.failureReason})`;
  if (w.awaitingOperator) return `${base} (${who.t("withdrawal.awaiting")})`;
  return base;
}

/** A spreadsheet must not run a cell: text that starts like a formula is kept as text. */
function cell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

function decideForms(who: SignedIn, w: Withdrawal, back: string, state: DetailState): SafeHtml | null {
  // Offered by role only: the payout service decides (and refuses).
  if (w.status !== WithdrawalStatus.PROCESSING || !w.awaitingOperator || !roleAtLeast(who.operator.role, "operator")) return null;
  const mine = (a: Action) => state.action === a && state.id === w.id;
  const err = (a: Action, ...names: string[]) => (mine(a) && state.refusal?.field && names.includes(state.refusal.field) ? state.refusal.message : undefined);
  return html`<form method="post" action="${`/withdrawals/${w.id}/complete`}" class="card" aria-labelledby="${`h-complete-${w.id}`}">
<h3 id="${`h-complete-${w.id}`}">${who.t("withdrawal.complete")}</h3>${csrfField(who)}<input type="hidden" name="back" value="${back}">
${field({ id: `complete-ref-${w.id}`, name: "bankReference", label: who.t("withdrawal.bankReference"), required: true, value: mine("complete") ? (state.form?.bankReference ?? "") : "", hint: who.t("withdrawal.bankReferenceHint"), error: err("complete", "bank_reference", "bankReference") })}
<button type="submit">${who.t("withdrawal.complete")}</button></form>
<form method="post" action="${`/withdrawals/${w.id}/fail`}" class="card" aria-labelledby="${`h-fail-${w.id}`}">
<h3 id="${`h-fail-${w.id}`}">${who.t("withdrawal.fail")}</h3>${csrfField(who)}<input type="hidden" name="back" value="${back}">
${field({ id: `fail-reason-${w.id}`, name: "reason", label: who.t("withdrawal.failReason"), required: true, value: mine("fail") ? (state.form?.reason ?? "") : "", hint: who.t("withdrawal.failReasonHint"), error: err("fail", "reason") })}
<button type="submit">${who.t("withdrawal.fail")}</button></form>`;
}

function table(who: SignedIn, names: Names, withdrawals: Withdrawal[], caption: string): SafeHtml {
  if (withdrawals.length === 0) return html`<p>${who.t("list.empty")}</p>`;
  return html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">${who.t("withdrawal.id")}</th><th scope="col">${who.t("list.merchant")}</th><th scope="col">${who.t("deposit.processId")}</th><th scope="col">${who.t("list.created")}</th><th scope="col">${who.t("list.status")}</th><th scope="col" class="num">${who.t("transfer.amount")}</th><th scope="col">${who.t("withdrawal.recipient")}</th><th scope="col">IBAN</th><th scope="col">${who.t("deposit.kind")}</th></tr></thead>
<tbody>${withdrawals.map(
    (w) => html`<tr><td><a href="${`/withdrawals/${w.id}`}">${w.id}</a></td><td>${merchantNamed(names, w.merchantId)}</td><td>${w.processId}</td><td>${timeOf(w.createdAt, who.lang)}</td><td>${statusText(who, w)}</td><td class="num">${money(w.amount, w.currency, who.lang)}</td><td>${w.accountName}</td><td><code>${w.iban}</code></td><td>${w.sandbox ? who.t("kind.sandbox") : who.t("kind.live")}</td></tr>`,
  )}</tbody></table>`;
}

type Found = { withdrawals: Withdrawal[]; nextCursor: string } | Refusal;

/** The search by id, or by process id with the merchant: one withdrawal or none. */
async function findOne(who: SignedIn, f: Filters): Promise<Found> {
  const payouts = who.client(PayoutService);
  const lookups = [() => payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: f.q } })];
  if (f.merchant) lookups.push(() => payouts.getWithdrawal({ merchantId: f.merchant, key: { case: "processId", value: f.q } }));
  for (const lookup of lookups) {
    try {
      const found = (await lookup()).withdrawal;
      if (found) return { withdrawals: [found], nextCursor: "" };
    } catch (err) {
      const refusal = refusalOf(err, who.t);
      if (refusal.status !== 404 && refusal.status !== 400) return refusal;
    }
  }
  return { withdrawals: [], nextCursor: "" };
}

/** One page of ListWithdrawals with the form's filters, of the mode shown (sandbox or live). */
function listPage(who: SignedIn, q: ListQuery): Promise<Found> {
  const status = isWithdrawalStatusName(q.f.status) ? withdrawalStatusToProto(q.f.status) : WithdrawalStatus.UNSPECIFIED;
  return answerOrRefusal(who, () => who.client(PayoutService).listWithdrawals({ ...listRequest(q, PAGE_SIZE), status, iban: q.f.iban, holderName: q.f.name }));
}

interface DetailState {
  id?: string | undefined;
  refusal?: Refusal | undefined;
  action?: Action | undefined;
  form?: Record<string, string> | undefined;
}

/** Where a decision came from: the queue or the withdrawal's own page (never anything else). */
function backOf(value: string | undefined, id: string): string {
  return value === "/withdrawals/awaiting" ? value : `/withdrawals/${id}`;
}

/**
 * Withdrawals: the list with ListWithdrawals' filters paged by the service's cursor, a search by
 * id (or process id with the merchant); one withdrawal with its timeline and callbacks; the queue
 * of withdrawals in processing left to an operator (awaiting_operator, as the CLI reads it) with
 * complete (the bank's reference) and fail (a reason code), and the live ones as the bank's
 * bulk-payment CSV (the CLI's `withdrawal export` file).
 */
export function withdrawalPages(deps: ConsoleContext): ConsoleRoute[] {
  const showDetail = async (ctx: ConsoleContextKoa, who: SignedIn, id: string, state: DetailState, banner: SafeHtml | null, status = 200) => {
    const title = who.t("withdrawal.title", { id });
    const back = html`<p><a href="/withdrawals">${who.t("withdrawals.back")}</a></p>`;
    const w = await readOne(ctx, who, { title, back, id }, async () => (await who.client(PayoutService).getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })).withdrawal);
    if (!w) return;
    const merchantId = w.merchantId;
    const [events, audit, names] = await Promise.all([eventsOf(who, id), auditOf(who, "payout", id), Names.of(deps, who).then((n) => n.ensure({ merchants: [merchantId] }))]);
    const entries: TimelineEntry[] = [{ at: w.createdAt, what: who.t("history.created"), detail: money(w.amount, w.currency, who.lang) }, ...eventEntries(who, events), ...auditEntries(audit, who.lang)];
    if (w.completedAt && (!Array.isArray(events) || events.length === 0)) entries.push({ at: w.completedAt, what: statusText(who, w) });
    // While an approval waits for this withdrawal, it stands where the decision forms would.
    const forms = await formsUnlessWaiting(who, ["payout"], w.id, decideForms(who, w, `/withdrawals/${w.id}`, state));
    const generalError = state.refusal && !state.refusal.approvalId ? alert(state.refusal.message) : null;
    workPage(
      ctx,
      who,
      {
        title,
        body: html`${banner}${generalError}<p><a href="/withdrawals">${who.t("withdrawals.back")}</a> · <a href="/withdrawals/awaiting">${who.t("withdrawals.queue")}</a></p>
<dl class="facts card">
<dt>${who.t("list.status")}</dt><dd>${statusText(who, w)}</dd>
<dt>${who.t("list.merchant")}</dt><dd>${merchantNamed(names, w.merchantId)}</dd>
<dt>${who.t("deposit.processId")}</dt><dd>${w.processId}</dd>
<dt>${who.t("deposit.kind")}</dt><dd>${w.sandbox ? who.t("kind.sandbox") : who.t("kind.live")}</dd>
<dt>${who.t("transfer.amount")}</dt><dd>${money(w.amount, w.currency, who.lang)}</dd>
<dt>${who.t("withdrawal.recipient")}</dt><dd>${w.accountName}</dd>
<dt>IBAN</dt><dd><code>${w.iban}</code></dd>
<dt>${who.t("withdrawal.bank")}</dt><dd>${bankNamed(names, w.bankId)}</dd>
<dt>${who.t("withdrawal.bankReference")}</dt><dd>${w.bankReference || "—"}</dd>
<dt>${who.t("deposit.customer")}</dt><dd>${w.name || w.userName || w.userId ? html`${named(w.name || w.userName, w.userId)}${w.userName && w.name ? html` · ${w.userName}` : null}` : "—"}</dd>
<dt>${who.t("list.created")}</dt><dd>${timeOf(w.createdAt, who.lang)}</dd>
<dt>${who.t("deposit.final")}</dt><dd>${timeOf(w.completedAt, who.lang) ?? "—"}</dd>
</dl>
${forms ? html`<h2>${who.t("deposit.decide")}</h2><div class="actions">${forms}</div>` : null}
${timelineSection(who, entries, Array.isArray(audit) ? undefined : audit)}
${callbacksSection(who, events)}`,
      },
      status,
    );
  };

  const showQueue = async (ctx: ConsoleContextKoa, who: SignedIn, cursor: string, state: DetailState, banner: SafeHtml | null, status = 200) => {
    const title = who.t("withdrawals.queue");
    const now = deps.clock.now();
    try {
      const [res, names] = await Promise.all([
        who.client(PayoutService).listWithdrawals({ allMerchants: true, awaitingOperator: true, sandbox: sandboxFilter(ctx.state.mode), limit: PAGE_SIZE, cursor }),
        Names.of(deps, who),
      ]);
      await names.ensure({ merchants: res.withdrawals.map((w) => w.merchantId) });
      const generalError = state.refusal && !state.refusal.approvalId ? alert(state.refusal.message) : null;
      const items = res.withdrawals.map((w) => {
        const forms = decideForms(who, w, "/withdrawals/awaiting", state);
        return html`<section class="card" aria-labelledby="${`q-${w.id}`}"><h2 id="${`q-${w.id}`}"><a href="${`/withdrawals/${w.id}`}">${w.id}</a> · ${money(w.amount, w.currency, who.lang)}</h2>
<p>${w.accountName} · <code>${w.iban}</code> · ${merchantNamed(names, w.merchantId)} · ${w.sandbox ? who.t("kind.sandbox") : who.t("kind.live")} · ${timeOf(w.createdAt, who.lang)} (${ageOf(w.createdAt, now, who.t)})</p>
${forms ? html`<div class="actions">${forms}</div>` : null}</section>`;
      });
      workPage(
        ctx,
        who,
        {
          title,
          body: html`${banner}${generalError}<p>${who.t("withdrawals.queueIntro")}</p>
<p><a href="/withdrawals/awaiting.csv" download>${who.t("withdrawals.bankFile")}</a></p>
${items.length === 0 ? html`<p>${who.t("withdrawals.queueEmpty")}</p>` : items}
${pager(who, "/withdrawals/awaiting", {}, cursor, res.nextCursor)}`,
        },
        status,
      );
    } catch (err) {
      const refusal = refusalOf(err, who.t);
      workPage(ctx, who, { title, body: refusalAlert(refusal) }, refusal.status);
    }
  };

  const act = (action: Action): ConsoleRoute => (operatorRoute(deps, { method: "POST", path: `/withdrawals/:id/${action}` }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      const form = ctx.state.form ?? {};
      if (!ID_PATTERN.test(id)) return notFoundPage(ctx, who);
      const back = backOf(form.back, id);
      const again = (refusal: Refusal) =>
        back === "/withdrawals/awaiting" ? showQueue(ctx, who, "", { id, action, form, refusal }, null, refusal.status) : showDetail(ctx, who, id, { id, action, form, refusal }, null, refusal.status);
      try {
        if (action === "complete") {
          const bankReference = (form.bankReference ?? "").trim();
          if (!bankReference) return await again({ status: 400, message: who.t("withdrawal.bankReferenceRequired"), reason: "VALIDATION_ERROR", field: "bank_reference", approvalId: undefined });
          await who.client(PayoutService).completeWithdrawal({ withdrawalId: id, bankReference });
        } else {
          const reason = (form.reason ?? "").trim();
          if (!reason) return await again({ status: 400, message: who.t("withdrawal.failReasonRequired"), reason: "VALIDATION_ERROR", field: "reason", approvalId: undefined });
          await who.client(PayoutService).failWithdrawal({ withdrawalId: id, reason });
        }
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        if (refusal.approvalId) return seeOther(ctx, `/withdrawals/${id}?approval=${encodeURIComponent(refusal.approvalId)}`);
        return again(refusal);
      }
      seeOther(ctx, back === "/withdrawals/awaiting" ? `/withdrawals/awaiting?done=${action}&id=${encodeURIComponent(id)}` : `/withdrawals/${id}?done=${action}`);
    }));

  const doneBanner = (who: SignedIn, done: unknown, id?: string) =>
    isAction(done) ? notice(who.t(done === "complete" ? "withdrawal.done.complete" : "withdrawal.done.fail", { id: id ?? "" })) : null;

  return [
    operatorRoute(deps, { method: "GET", path: "/withdrawals" }, async (ctx, who) => {
      const q = listQueryOf(ctx, who);
      const { f, sandbox, invalid, cursor } = q;
      const listing = invalid.size > 0 ? Promise.resolve(undefined) : f.q ? findOne(who, f) : listPage(who, q);
      const [names, found] = await Promise.all([Names.of(deps, who), listing]);
      await names.ensure({ merchants: [f.merchant, ...(found && "withdrawals" in found ? found.withdrawals.map((w) => w.merchantId) : [])] });
      const label = (s: WithdrawalStatusName) => who.t(`withdrawal.status.${s}`);
      const form = filterForm(who, { names, sandbox }, "/withdrawals", f, WITHDRAWAL_STATUSES, label, invalid, SEARCH);
      const page = (body: SafeHtml, status = 200) =>
        workPage(ctx, who, { title: who.t("withdrawals.title"), body: html`<p>${who.t("withdrawals.intro")} <a href="/withdrawals/awaiting">${who.t("withdrawals.queue")}</a></p>${form}${body}` }, status);
      if (!found) return page(html``, 400);
      if ("message" in found) return page(refusalAlert(found), found.status);
      if (f.q && found.withdrawals.length === 0) return page(html`${f.merchant ? null : html`<p class="hint">${who.t("list.processIdNeedsMerchant")}</p>`}<p>${who.t("list.empty")}</p>`);
      page(html`${table(who, names, found.withdrawals, who.t("withdrawals.caption"))}${f.q ? null : pager(who, "/withdrawals", { ...f }, cursor, found.nextCursor)}`);
    }),
    operatorRoute(deps, { method: "GET", path: "/withdrawals/awaiting" }, async (ctx, who) => {
      const id = cursorParam(ctx.query.id);
      await showQueue(ctx, who, cursorParam(ctx.query.cursor), {}, doneBanner(who, ctx.query.done, id));
    }),
    operatorRoute(deps, { method: "GET", path: "/withdrawals/awaiting.csv" }, async (ctx, who) => {
      // As the CLI's export: every live withdrawal awaiting an operator, all pages, oldest first.
      const found: Withdrawal[] = [];
      try {
        let cursor = "";
        do {
          const page = await who.client(PayoutService).listWithdrawals({ allMerchants: true, awaitingOperator: true, sandbox: false, limit: EXPORT_PAGE, cursor });
          found.push(...page.withdrawals);
          cursor = page.nextCursor;
        } while (cursor !== "");
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        return workPage(ctx, who, { title: who.t("withdrawals.queue"), body: refusalAlert(refusal) }, refusal.status);
      }
      found.reverse();
      const lang = who.lang;
      const dialect = BANK_FILE_DIALECT[lang];
      const out = new PassThrough();
      const csv = stringify({ delimiter: dialect.delimiter, record_delimiter: "\r\n" });
      out.write(BOM);
      csv.pipe(out);
      ctx.type = "text/csv; charset=utf-8";
      ctx.attachment(lang === "tr" ? "toplu-odeme.csv" : "bulk-payment.csv");
      ctx.body = out;
      csv.write([...BANK_FILE_HEADERS[lang]]);
      for (const w of found) csv.write([cell(w.accountName), cell(w.iban), majorUnits(w.amount, w.currency).replace(".", dialect.decimal), cell(w.id)]);
      csv.end();
    }),
    operatorRoute(deps, { method: "GET", path: "/withdrawals/:id", ids: ["id"] }, async (ctx, who, { id }) => {
      const approval = cursorParam(ctx.query.approval);
      await showDetail(ctx, who, id, {}, approval ? waitingForApproval(who, "payout", approval) : doneBanner(who, ctx.query.done, id));
    }),
    act("complete"),
    act("fail"),
  ];
}
