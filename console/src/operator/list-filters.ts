import { html, type SafeHtml } from "../shared/html.js";
import type { Language } from "../shared/i18n.js";
import type { TextKey } from "./texts/index.js";
import { field } from "../shared/layout.js";
import { merchantSelect, type Names } from "./directory.js";
import type { ConsoleContextKoa } from "../state.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { sandboxFilter } from "../shared/mode.js";
import { cursorParam, dayAfter, dayStart, minorUnits, queryText, type SignedIn } from "./operator-call.js";

/** A transaction list's filters (deposits, withdrawals), as the query carries them. */
export interface Filters {
  q: string;
  merchant: string;
  status: string;
  from: string;
  to: string;
  /** The search fields (issue 23); each page offers those its list call has (SearchField). */
  reference: string;
  customer: string;
  name: string;
  iban: string;
  amount: string;
}

export function filtersOf(ctx: ConsoleContextKoa): Filters {
  return {
    q: queryText(ctx.query.q, 100),
    merchant: queryText(ctx.query.merchant, 80),
    status: queryText(ctx.query.status, 20),
    from: queryText(ctx.query.from, 10),
    to: queryText(ctx.query.to, 10),
    reference: queryText(ctx.query.reference, 20),
    customer: queryText(ctx.query.customer, 200),
    name: queryText(ctx.query.name, 200),
    iban: queryText(ctx.query.iban, 50),
    amount: queryText(ctx.query.amount, 20),
  };
}

/** A search field a page offers: its query name and its label (and hint) in the page's words. */
export interface SearchField {
  name: "reference" | "customer" | "name" | "iban" | "amount";
  label: TextKey;
  hint?: TextKey;
}

/**
 * The amount filter in kuruş, typed in lira ("250" or "250,50"): undefined when empty, "bad"
 * when it is not an amount (the form says so on the field; the service judges the rest).
 */
export function amountOf(f: Filters, lang: Language): bigint | "bad" | undefined {
  if (!f.amount) return undefined;
  const amount = minorUnits(f.amount, lang);
  return amount === undefined || amount === 0n ? "bad" : amount;
}

const INVALID_TEXT: Partial<Record<string, TextKey>> = { from: "list.badDay", to: "list.badDay", amount: "list.badAmount" };

/** Who the list is for: the names of its merchant choice, and the mode shown (its merchants first). */
export interface ListScope {
  names: Names;
  sandbox: boolean;
}

/** The filter form: the fields ListDeposits and ListWithdrawals offer (the merchant chosen by name), and a search by id or process id. */
export function filterForm<S extends string>(who: SignedIn, scope: ListScope, path: string, f: Filters, statuses: readonly S[], statusLabel: (s: S) => string, invalid: Set<string>, search: readonly SearchField[] = []): SafeHtml {
  const bad = (name: string) => {
    const key = invalid.has(name) ? INVALID_TEXT[name] : undefined;
    return key ? who.t(key) : undefined;
  };
  return html`<form method="get" action="${path}" class="filters" role="search" aria-label="${who.t("list.search")}">
<div>${field({ name: "q", label: who.t("list.q"), type: "search", value: f.q, hint: who.t("list.qHint") })}</div>
<div>${merchantSelect(scope.names, { id: "field-merchant", name: "merchant", label: who.t("list.merchant"), value: f.merchant, lang: who.lang, sandboxFirst: scope.sandbox })}</div>
<div><label for="field-status">${who.t("list.status")}</label>
<select id="field-status" name="status"><option value="">${who.t("list.anyStatus")}</option>${statuses.map((s) => html`<option value="${s}"${s === f.status ? html` selected` : null}>${statusLabel(s)}</option>`)}</select></div>
<div>${field({ name: "from", label: who.t("list.from"), type: "date", value: f.from, error: bad("from") })}</div>
<div>${field({ name: "to", label: who.t("list.to"), type: "date", value: f.to, error: bad("to") })}</div>
${search.map((s) => html`<div>${field({ name: s.name, label: who.t(s.label), type: "search", value: f[s.name], ...(s.hint ? { hint: who.t(s.hint) } : {}), error: bad(s.name), ...(s.name === "amount" ? { inputmode: "decimal" as const } : {}) })}</div>`)}
<div><button type="submit">${who.t("list.searchButton")}</button></div>
</form>`;
}

/** A transaction list's query as a page reads it: the filters, the mode shown, the days and amount they mean, which of them are not, and the page's cursor. */
export interface ListQuery {
  f: Filters;
  sandbox: boolean;
  from: Date | undefined;
  to: Date | undefined;
  amount: bigint | "bad" | undefined;
  cursor: string;
  /** The fields that do not mean what they must (a day, an amount): the form says so on each, and nothing is asked. */
  invalid: Set<string>;
}

export function listQueryOf(ctx: ConsoleContextKoa, who: SignedIn): ListQuery {
  const f = filtersOf(ctx);
  const from = f.from ? dayStart(f.from) : undefined;
  const to = f.to ? dayAfter(f.to) : undefined;
  const amount = amountOf(f, who.lang);
  const invalid = new Set([f.from && !from ? "from" : "", f.to && !to ? "to" : "", amount === "bad" ? "amount" : ""].filter(Boolean));
  return { f, sandbox: sandboxFilter(ctx.state.mode), from, to, amount, cursor: cursorParam(ctx.query.cursor), invalid };
}

/** What ListDeposits and ListWithdrawals are both asked: the merchant (or all), the period, the amount, the mode, one page. */
export function listRequest(q: ListQuery, limit: number) {
  return {
    ...(q.f.merchant ? { merchantId: q.f.merchant } : { allMerchants: true }),
    ...(q.from ? { createdFrom: timestampFromDate(q.from) } : {}),
    ...(q.to ? { createdTo: timestampFromDate(q.to) } : {}),
    ...(typeof q.amount === "bigint" ? { amount: q.amount } : {}),
    sandbox: q.sandbox,
    limit,
    cursor: q.cursor,
  };
}
