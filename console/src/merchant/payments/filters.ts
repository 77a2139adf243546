import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { DepositStatus, type ListDepositsRequest, type ListDepositsRequestSchema } from "@payments/contracts/deposit";
import { WithdrawalStatus, type ListWithdrawalsRequest, type ListWithdrawalsRequestSchema } from "@payments/contracts/payout";
import { DEPOSIT_STATUSES, WITHDRAWAL_STATUSES, depositStatusToProto, isDepositStatusName, isWithdrawalStatusName, withdrawalStatusToProto } from "@payments/contracts/statuses";
import { html, type SafeHtml } from "../../shared/html.js";
import type { Language } from "../../shared/i18n.js";
import { field } from "../../shared/layout.js";
import { dayAfter, dayStart, minorUnits, queryText } from "../../shared/params.js";
import { sandboxFilter } from "../../shared/mode.js";
import type { ConsoleContextKoa } from "../../state.js";
import type { MerchantSignedIn } from "../merchant-call.js";
import { paymentTexts } from "./texts.js";

/**
 * The Payments list's filters, shared by the list, its pages and its CSV: as the query carries
 * them, checked, as ListDeposits/ListWithdrawals requests (in the page's mode: live or sandbox,
 * never both), and as the form and the tabs.
 */

type Key = Parameters<typeof paymentTexts>[1];
type T = (key: Key, params?: Record<string, string | number>) => string;

export const KINDS = ["deposits", "withdrawals"] as const;
export type Kind = (typeof KINDS)[number];

/** The filters as the query carries them (the list, its pages and its CSV share them). */
export interface PaymentFilters {
  kind: Kind;
  status: string;
  from: string;
  to: string;
  amount: string;
  customerId: string;
  customerName: string;
  holderName: string;
  processId: string;
  reference: string;
}

export function filtersOf(query: ConsoleContextKoa["query"]): PaymentFilters {
  return {
    kind: query.kind === "withdrawals" ? "withdrawals" : "deposits",
    status: queryText(query.status, 20),
    from: queryText(query.from, 10),
    to: queryText(query.to, 10),
    amount: queryText(query.amount, 20),
    customerId: queryText(query.customerId, 200),
    customerName: queryText(query.customerName, 200),
    holderName: queryText(query.holderName, 200),
    processId: queryText(query.processId, 50),
    reference: queryText(query.reference, 20),
  };
}

/** The filters that apply to a kind, as query parameters (empty ones left out). */
export function paramsOf(f: PaymentFilters, extra: Record<string, string> = {}): URLSearchParams {
  const own: Record<string, string> =
    f.kind === "deposits"
      ? { kind: f.kind, status: f.status, from: f.from, to: f.to, amount: f.amount, customerId: f.customerId, customerName: f.customerName, processId: f.processId, reference: f.reference }
      : { kind: f.kind, status: f.status, from: f.from, to: f.to, amount: f.amount, holderName: f.holderName, processId: f.processId };
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...own, ...extra })) if (v) params.set(k, v);
  return params;
}

export interface Checked {
  invalid: Set<string>;
  /** The page's mode (shared/mode.ts): every list is live or sandbox, never both. */
  sandbox: boolean;
  from?: Date | undefined;
  to?: Date | undefined;
  amount?: bigint | undefined;
}

export function check(f: PaymentFilters, lang: Language, mode: ConsoleContextKoa["state"]["mode"]): Checked {
  const from = f.from ? dayStart(f.from) : undefined;
  const to = f.to ? dayAfter(f.to) : undefined;
  const amount = f.amount ? minorUnits(f.amount, lang) : undefined;
  const invalid = new Set<string>();
  if (f.from && !from) invalid.add("from");
  if (f.to && !to) invalid.add("to");
  if (f.amount && (amount === undefined || amount === 0n)) invalid.add("amount");
  return { invalid, sandbox: sandboxFilter(mode), from, to, amount };
}

/** What both lists are asked by: the merchant, the mode, the created range and the exact amount. */
function commonRequest(who: MerchantSignedIn, c: Checked) {
  return {
    merchantId: who.user.merchantId,
    sandbox: c.sandbox,
    ...(c.from ? { createdFrom: timestampFromDate(c.from) } : {}),
    ...(c.to ? { createdTo: timestampFromDate(c.to) } : {}),
    ...(c.amount ? { amount: c.amount } : {}),
  };
}

export function depositsRequest(who: MerchantSignedIn, f: PaymentFilters, c: Checked, limit: number, cursor: string): MessageInitShape<typeof ListDepositsRequestSchema> {
  return {
    ...commonRequest(who, c),
    status: isDepositStatusName(f.status) ? depositStatusToProto(f.status) : DepositStatus.UNSPECIFIED,
    customerId: f.customerId,
    customerName: f.customerName,
    reference: f.reference,
    limit,
    cursor,
  } satisfies Partial<ListDepositsRequest>;
}

export function withdrawalsRequest(who: MerchantSignedIn, f: PaymentFilters, c: Checked, limit: number, cursor: string): MessageInitShape<typeof ListWithdrawalsRequestSchema> {
  return {
    ...commonRequest(who, c),
    status: isWithdrawalStatusName(f.status) ? withdrawalStatusToProto(f.status) : WithdrawalStatus.UNSPECIFIED,
    holderName: f.holderName,
    limit,
    cursor,
  } satisfies Partial<ListWithdrawalsRequest>;
}

/** The one payment a process id names, or none (not found, or not a process id at all). */
export async function byProcessId<R extends { sandbox: boolean }>(sandbox: boolean, call: () => Promise<R | undefined>): Promise<R[]> {
  try {
    const found = await call();
    // A payment of the other mode is not in this mode's list.
    return found && found.sandbox === sandbox ? [found] : [];
  } catch (err) {
    const code = err instanceof ConnectError ? err.code : undefined;
    if (code === Code.NotFound || code === Code.InvalidArgument) return [];
    throw err;
  }
}

export function filterForm(t: T, f: PaymentFilters, invalid: Set<string>): SafeHtml {
  const statuses: readonly string[] = f.kind === "deposits" ? DEPOSIT_STATUSES : WITHDRAWAL_STATUSES;
  const label = (s: string) => t((f.kind === "deposits" ? `deposit.status.${s}` : `withdrawal.status.${s}`) as Key);
  const bad = (name: string, key: Key) => (invalid.has(name) ? t(key) : undefined);
  const search = (name: keyof PaymentFilters, key: Key, extra: { hint?: string; inputmode?: "numeric" | "decimal"; error?: string | undefined } = {}) =>
    html`<div>${field({ name, label: t(key), type: "search", value: f[name], ...extra })}</div>`;
  return html`<form method="get" action="/merchant/payments" class="filters" role="search" aria-label="${t("filter.search")}">
<input type="hidden" name="kind" value="${f.kind}">
<div><label for="field-status">${t("filter.status")}</label>
<select id="field-status" name="status"><option value="">${t("filter.anyStatus")}</option>${statuses.map((s) => html`<option value="${s}"${s === f.status ? html` selected` : null}>${label(s)}</option>`)}</select></div>
<div>${field({ name: "from", label: t("filter.from"), type: "date", value: f.from, error: bad("from", "filter.badDay") })}</div>
<div>${field({ name: "to", label: t("filter.to"), type: "date", value: f.to, error: bad("to", "filter.badDay") })}</div>
${search("amount", "filter.amount", { hint: t("filter.amountHint"), inputmode: "decimal", error: bad("amount", "filter.badAmount") })}
${f.kind === "deposits" ? html`${search("customerId", "filter.customerId")}${search("customerName", "filter.customerName")}${search("reference", "filter.reference")}` : search("holderName", "filter.holderName")}
${search("processId", "filter.processId")}
<div><button type="submit">${t("filter.submit")}</button></div>
</form><p><a href="${`/merchant/payments?kind=${f.kind}`}">${t("filter.clear")}</a></p>`;
}

export function tabs(t: T, kind: Kind): SafeHtml {
  return html`<nav aria-label="${t("tabs.label")}"><ul>${KINDS.map(
    (k) => html`<li><a href="${`/merchant/payments?kind=${k}`}"${k === kind ? html` aria-current="page"` : null}>${t(k === "deposits" ? "tab.deposits" : "tab.withdrawals")}</a></li>`,
  )}</ul></nav>`;
}

