import { Readable } from "node:stream";
import { PayoutService, type GetStatementResponse, type StatementLine } from "@payments/contracts/payout";
import { zoneOffsetMs } from "@payments/kit";
import {
  CSV_BOM,
  STATEMENT_MAX_DAYS,
  statementCsvHead,
  statementCsvRows,
  statementCsvTail,
  statementMovement,
  statementPeriod,
  statementRecord,
  type FileLocale,
  type StatementMovement,
  type StatementRecord,
} from "@payments/records";
import { html, type SafeHtml } from "../../shared/html.js";
import { field } from "../../shared/layout.js";
import { linkTo } from "../../shared/params.js";
import { formatMoney, formatTime, TIME_ZONE, turkeyDay } from "../../shared/format.js";
import type { ConsoleContextKoa } from "../../state.js";
import { merchantRefusal, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import type { StatementDetails } from "./statement-details.js";
import { statementTexts } from "./statement-texts.js";
import { moneyTexts } from "./texts.js";

/**
 * The Money page's statement: the record, arithmetic and CSV of GET /v1/statement
 * (`@payments/records` statement.ts), over days as Türkiye counts them (from 00:00 of the first
 * day to 24:00 of the last, Europe/Istanbul), shown in Türkiye's time. Each line says what it
 * was: a deposit from whom (a short payment with both amounts), a withdrawal's hold and release
 * as the move between available and held they are, an adjustment with its reason.
 */

type T = (key: Parameters<typeof moneyTexts>[1], params?: Record<string, string | number>) => string;
type ST = (key: Parameters<typeof statementTexts>[1], params?: Record<string, string | number>) => string;

const DAY_MS = 86_400_000;

/** A YYYY-MM-DD date as the epoch ms of that whole UTC day's start, or undefined. */
export function utcDay(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value}T00:00:00.000Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? undefined : ms;
}

/** 00:00 in Türkiye of the day whose UTC start is `utcDayMs`. */
export function turkeyMidnight(utcDayMs: number): number {
  const guess = utcDayMs - zoneOffsetMs(utcDayMs, TIME_ZONE);
  return utcDayMs - zoneOffsetMs(guess, TIME_ZONE);
}

/** This month so far, by the calendar in Türkiye: the default statement period. */
export function thisMonth(now: Date): { from: string; to: string } {
  const today = turkeyDay(now);
  return { from: `${today.slice(0, 8)}01`, to: today };
}

export interface StatementAsk {
  from: string;
  to: string;
  /** The range asked of the service (Türkiye's days), or the problem of a date. */
  period: { startMs: number; endMs: number; from: string; to: string } | { field: "from" | "to"; problem: string };
}

export function statementAsk(query: Record<string, unknown>, now: Date, t: T): StatementAsk {
  const given = (v: unknown) => (typeof v === "string" ? v.trim() : "");
  const fallback = thisMonth(now);
  const from = given(query.from) || fallback.from;
  const to = given(query.to) || fallback.to;
  const fromMs = utcDay(from);
  const toMs = utcDay(to);
  if (fromMs === undefined) return { from, to, period: { field: "from", problem: t("statement.badDate") } };
  if (toMs === undefined) return { from, to, period: { field: "to", problem: t("statement.badDate") } };
  const period = statementPeriod(fromMs, toMs);
  if ("problem" in period) return { from, to, period: { field: "to", problem: period.problem } };
  return { from, to, period: { ...period, startMs: turkeyMidnight(fromMs), endMs: turkeyMidnight(toMs + DAY_MS) } };
}

export interface StatementPage {
  record: StatementRecord;
  lines: readonly StatementLine[];
  details: StatementDetails;
  next: string;
  cursor: string;
}

function paymentCell(m: StatementMovement): SafeHtml | string {
  const label = m.processId ?? m.transactionId;
  if (m.transactionId.startsWith("dep_")) return html`<a href="${`/merchant/deposits/${m.transactionId}`}">${label}</a>`;
  if (m.transactionId.startsWith("wdr_")) return html`<a href="${`/merchant/withdrawals/${m.transactionId}`}">${label}</a>`;
  return m.transactionId;
}

/** What the line was, in words: never a bare kind with a zero beside it. */
function whatOf(s: ST, lang: MerchantSignedIn["lang"], cur: string, m: StatementMovement, entryId: string, d: StatementDetails): string {
  const amount = (n: number | bigint) => formatMoney(n, cur, lang);
  const holder = d.holders.get(m.transactionId);
  switch (m.kind) {
    case "deposit_credit": {
      const dep = d.deposits.get(m.transactionId);
      if (!dep) return "";
      const from = dep.customerName ? s("deposit.from", { name: dep.customerName }) : "";
      const both = { received: amount(dep.received), requested: amount(dep.requested) };
      const gap = dep.received < dep.requested ? s("deposit.short", both) : dep.received > dep.requested ? s("deposit.over", both) : "";
      return [from, gap].filter(Boolean).join(" · ");
    }
    case "withdrawal_hold":
      return holder ? s("hold.detail", { amount: amount(m.heldChange), holder }) : s("hold.detailNoHolder", { amount: amount(m.heldChange) });
    case "withdrawal_release":
      return holder ? s("release.detail", { amount: amount(m.availableChange), holder }) : s("release.detailNoHolder", { amount: amount(m.availableChange) });
    case "withdrawal_debit":
      return holder ? s("debit.detail", { holder }) : "";
    case "adjustment": {
      const reason = d.reasons.get(entryId);
      return reason ? s("adjustment.reason", { reason }) : s("adjustment.noReason");
    }
  }
}

function movementRows(who: MerchantSignedIn, t: T, page: StatementPage): SafeHtml[] {
  const s: ST = (key, params) => statementTexts(who.lang, key, params);
  const cur = page.record.currency;
  const change = (n: number) => (n === 0 ? s("change.none") : `${n > 0 ? "+" : ""}${formatMoney(n, cur, who.lang)}`);
  return page.record.movements.map((m, i) => {
    const what = whatOf(s, who.lang, cur, m, page.lines[i]?.entryId ?? "", page.details);
    return html`<tr><td><time datetime="${m.at}">${formatTime(new Date(m.at), who.lang)}</time></td><td><strong>${t(`kind.${m.kind}`)}</strong>${what ? html`<br><small>${what}</small>` : null}</td><td class="num">${change(m.availableChange)}</td><td class="num">${change(m.heldChange)}</td><td class="num">${formatMoney(m.balanceAfter, cur, who.lang)}</td><td>${paymentCell(m)}</td></tr>`;
  });
}

function statementTable(who: MerchantSignedIn, t: T, page: StatementPage): SafeHtml {
  const s: ST = (key, params) => statementTexts(who.lang, key, params);
  const { record } = page;
  const caption = t("statement.caption", { from: record.from, to: record.to });
  return tableScroll(
    caption,
    html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">${t("statement.time")}</th><th scope="col">${s("col.what")}</th><th scope="col" class="num">${s("col.available")}</th><th scope="col" class="num">${s("col.held")}</th><th scope="col" class="num">${t("statement.balanceAfter")}</th><th scope="col">${s("col.payment")}</th></tr></thead>
<tbody>${movementRows(who, t, page)}</tbody></table>`,
  );
}

/** The statement's section: the period's form, its balances, its lines and the CSV links. */
export function statementSection(who: MerchantSignedIn, t: T, ask: StatementAsk, result: StatementPage | { error: SafeHtml } | undefined): SafeHtml {
  const lang = who.lang;
  const problem = "field" in ask.period ? ask.period : undefined;
  const err = (name: "from" | "to") => (problem?.field === name ? problem.problem : undefined);
  const form = html`<form method="get" action="/merchant/money" class="filters" aria-labelledby="h-statement">
${field({ id: "statement-from", name: "from", label: t("statement.from"), type: "date", value: ask.from, error: err("from") })}
${field({ id: "statement-to", name: "to", label: t("statement.to"), type: "date", value: ask.to, error: err("to") })}
<button type="submit">${t("statement.show")}</button></form>`;
  let content: SafeHtml | null = null;
  if (result && "error" in result) content = result.error;
  else if (result) {
    const { record, next, cursor } = result;
    const cur = record.currency;
    const csv = (locale: FileLocale) => linkTo("/merchant/statement.csv", { from: record.from, to: record.to, locale });
    const caption = t("statement.caption", { from: record.from, to: record.to });
    content = html`<dl class="facts card">
<dt>${t("statement.opening")}</dt><dd>${formatMoney(record.openingBalance, cur, lang)}</dd>
<dt>${t("statement.closing")}</dt><dd>${formatMoney(record.closingBalance, cur, lang)}</dd>
<dt>${t("statement.net")}</dt><dd>${formatMoney(record.closingBalance - record.openingBalance, cur, lang)}</dd>
</dl>
<p><a href="${csv("en")}" download>${t("statement.csv")}</a> · <a href="${csv("tr")}" download>${t("statement.csvTr")}</a></p>
${record.movements.length === 0 ? html`<p>${t("statement.empty")}</p>` : statementTable(who, t, result)}
<nav aria-label="${caption}"><ul>${cursor ? html`<li><a href="${linkTo("/merchant/money", { from: record.from, to: record.to })}">${t("statement.first")}</a></li>` : null}${next ? html`<li><a href="${linkTo("/merchant/money", { from: record.from, to: record.to, cursor: next })}" rel="next">${t("statement.next")}</a></li>` : null}</ul></nav>`;
  }
  return html`<section aria-labelledby="h-statement"><h2 id="h-statement">${t("statement.title")}</h2>
<p class="hint">${statementTexts(lang, "intro", { max: STATEMENT_MAX_DAYS })}</p>${form}${content}</section>`;
}

/** The page's answer as the section's input (the record of the service's page and its raw lines). */
export function statementOf(res: GetStatementResponse, period: { from: string; to: string }): { record: StatementRecord; lines: readonly StatementLine[] } {
  return { record: statementRecord(res, period.from, period.to), lines: res.lines };
}

/** Lines asked of the payout service per page while the CSV streams (as the gateway's statement). */
const CSV_PAGE_LINES = 1000;

/**
 * GET /merchant/statement.csv: the same period as the page (Türkiye's days), every line, streamed;
 * the file is the API's statement CSV for that range. The first page is asked before any byte, so
 * a refusal is still a page with its status.
 */
export async function statementCsv(ctx: ConsoleContextKoa, who: MerchantSignedIn, period: { startMs: number; endMs: number; from: string; to: string }): Promise<void> {
  const { startMs, endMs, from, to } = period;
  const locale: FileLocale = ctx.query.locale === "tr" ? "tr" : "en";
  const payouts = who.client(PayoutService);
  const page = (cursor: string) => payouts.getStatement({ merchantId: who.user.merchantId, currency: "", fromMs: BigInt(startMs), toMs: BigInt(endMs), limit: CSV_PAGE_LINES, cursor });
  let first: GetStatementResponse;
  try {
    first = await page("");
  } catch (err) {
    return merchantRefusal(ctx, who, err, { title: moneyTexts(who.lang, "statement.title"), active: "money" });
  }
  const { movements, ...head } = statementRecord(first, from, to);
  async function* body(): AsyncGenerator<string> {
    yield CSV_BOM + statementCsvHead(head, startMs, locale);
    yield statementCsvRows(movements, locale);
    let cursor = first.nextCursor;
    while (cursor !== "") {
      const next = await page(cursor);
      yield statementCsvRows(next.lines.map(statementMovement), locale);
      cursor = next.nextCursor;
    }
    yield statementCsvTail(head, endMs, locale);
  }
  ctx.status = 200;
  ctx.type = "text/csv; charset=utf-8";
  ctx.set("Content-Disposition", `attachment; filename="statement-${head.currency}-${from}-${to}.csv"`);
  ctx.body = Readable.from(body(), { objectMode: false });
}
