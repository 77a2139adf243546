import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { DepositService, type DepositTotals, type SummarizeDepositsResponse } from "@payments/contracts/deposit";
import { PayoutService, type Balance, type SummarizeWithdrawalsResponse, type WithdrawalTotals } from "@payments/contracts/payout";
import { MerchantService } from "@payments/contracts/merchant";
import { DEFAULT_SUMMARY_TIME_ZONE, errorInfo, zoneDate } from "@payments/kit";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { Language } from "../../shared/i18n.js";
import { dayAfter, dayStart } from "../../shared/params.js";
import type { ConsoleRoute } from "../../route.js";
import { formatDay, formatMoney, localeOf } from "../../shared/format.js";
import { sandboxFilter, type Mode } from "../../shared/mode.js";
import { merchantPage, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { dayChart } from "./chart.js";
import { homeTexts } from "./texts.js";

type HomeKey = Parameters<typeof homeTexts>[1];
type T = (key: HomeKey, params?: Record<string, string | number>) => string;

/** What Home shows of deposits and withdrawals alike (the two services' totals have the same fields). */
type Totals = DepositTotals | WithdrawalTotals;
type Summary = SummarizeDepositsResponse | SummarizeWithdrawalsResponse;
type Outcome<V> = { ok: true; value: V } | { ok: false; detail: string };

const DAY_MS = 86_400_000;
/** The currency Home counts (the summaries count one currency; TRY is every merchant's). */
const CURRENCY = "TRY";

async function settle<V>(call: Promise<V>): Promise<Outcome<V>> {
  try {
    return { ok: true, value: await call };
  } catch (err) {
    // A refusal or an outage is shown where the numbers would be; a bug is thrown on.
    if (!(err instanceof ConnectError)) throw err;
    return { ok: false, detail: errorInfo(err).message };
  }
}

function percent(bp: number, lang: Language): string {
  return new Intl.NumberFormat(localeOf(lang), { style: "percent", maximumFractionDigits: 2 }).format(bp / 10_000);
}

/** A YYYY-MM-DD day as Türkiye writes it (`7 Ara 2026`); noon UTC is that day in Türkiye. */
function dayText(date: string, lang: Language): string {
  return formatDay(new Date(`${date}T12:00:00Z`), lang);
}

/** A chart's day label, short: `7 Ara` / `7 Dec`. */
function shortDay(date: string, lang: Language): string {
  return new Intl.DateTimeFormat(localeOf(lang), { day: "numeric", month: "short", timeZone: "UTC" }).format(new Date(`${date}T12:00:00Z`));
}

/** A duration in whole seconds as people read it: "45 s", "3 min 20 s", "2 h 5 min", "3 d 4 h". */
export function duration(seconds: bigint, t: T): string {
  const s = Number(seconds);
  if (s < 60) return t("duration.seconds", { s });
  if (s < 3600) return t("duration.minutes", { m: Math.floor(s / 60), s: s % 60 });
  if (s < 86_400) return t("duration.hours", { h: Math.floor(s / 3600), m: Math.floor((s % 3600) / 60) });
  return t("duration.days", { d: Math.floor(s / 86_400), h: Math.floor((s % 86_400) / 3600) });
}

function totalsRow(label: string, totals: Outcome<Summary>, t: T, lang: Language): SafeHtml {
  if (!totals.ok) return html`<tr><th scope="row">${label}</th><td colspan="5">${t("unavailable", { detail: totals.detail })}</td></tr>`;
  const x: Totals | undefined = totals.value.totals;
  if (!x) return html`<tr><th scope="row">${label}</th><td colspan="5">—</td></tr>`;
  const finished = x.completedCount + x.failedCount + x.cancelledCount;
  return html`<tr><th scope="row">${label}</th><td class="num">${String(x.count)}</td><td class="num">${String(x.completedCount)}</td><td class="num">${formatMoney(x.completedVolume, CURRENCY, lang)}</td><td class="num">${finished === 0n ? t("successRate.none") : percent(x.successRateBp, lang)}</td><td class="num">${x.medianSecondsToComplete === undefined ? t("median.none") : duration(x.medianSecondsToComplete, t)}</td></tr>`;
}

function totalsTable(caption: string, deposits: Outcome<Summary>, withdrawals: Outcome<Summary>, t: T, lang: Language): SafeHtml {
  return tableScroll(
    caption,
    html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">${t("col.kind")}</th><th scope="col" class="num">${t("col.count")}</th><th scope="col" class="num">${t("col.completed")}</th><th scope="col" class="num">${t("col.volume")}</th><th scope="col" class="num">${t("col.successRate")}</th><th scope="col" class="num">${t("col.median")}</th></tr></thead>
<tbody>${totalsRow(t("kind.deposits"), deposits, t, lang)}${totalsRow(t("kind.withdrawals"), withdrawals, t, lang)}</tbody></table>`,
  );
}

/**
 * The balance, one card per currency, available and held one under the other (readable on a
 * phone: nothing to scroll to). Only in the mode of the account's money: the merchant is live or
 * sandbox, and so is every entry of its ledger; the other mode says where the balance is.
 */
function balances(result: Outcome<{ balances: Balance[]; sandbox: boolean }>, mode: Mode, t: T, lang: Language): SafeHtml {
  if (!result.ok) return html`<p>${t("unavailable", { detail: result.detail })}</p>`;
  const { sandbox } = result.value;
  if ((mode === "sandbox") !== sandbox) {
    const own = sandbox ? "sandbox" : "live";
    return html`<div class="notice" role="status"><p>${t(sandbox ? "balance.otherSandbox" : "balance.otherLive")}</p><p><a href="${`/merchant?mode=${own}`}">${t(sandbox ? "balance.showSandbox" : "balance.showLive")}</a></p></div>`;
  }
  return html`<div class="grid">${result.value.balances.map(
    (b) => html`<dl class="facts card balance" aria-label="${b.currency}"><dt>${t("balance.available")}</dt><dd class="num">${formatMoney(b.available, b.currency, lang)}</dd><dt>${t("balance.held")}</dt><dd class="num">${formatMoney(b.held, b.currency, lang)}</dd></dl>`,
  )}</div>`;
}

function chartSection(id: string, title: string, summary: Outcome<Summary>, t: T, lang: Language): SafeHtml {
  if (!summary.ok) return html`<h3>${title}</h3><p>${t("unavailable", { detail: summary.detail })}</p>`;
  const days = summary.value.days.map((d) => ({ date: d.date, label: shortDay(d.date, lang), bar: Number(d.completedVolume) / 100, line: Number(d.count) }));
  const compact = new Intl.NumberFormat(localeOf(lang), { notation: "compact", maximumFractionDigits: 1 });
  const chart = dayChart(days, {
    id,
    title,
    description: t("chart.desc", { currency: CURRENCY }),
    barLegend: t("chart.legendVolume", { currency: CURRENCY }),
    lineLegend: t("chart.legendCount"),
    barTick: (v) => compact.format(v),
    lineTick: (v) => String(v),
  });
  const caption = t("chart.tableCaption", { title });
  return html`<section class="card" aria-labelledby="${`${id}-h`}"><h3 id="${`${id}-h`}">${title}</h3>${chart}
<details><summary>${t("chart.table")}</summary>${tableScroll(
    caption,
    html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">${t("col.date")}</th><th scope="col" class="num">${t("col.count")}</th><th scope="col" class="num">${t("col.completed")}</th><th scope="col" class="num">${t("col.volume")}</th></tr></thead>
<tbody>${summary.value.days.map((d) => html`<tr><th scope="row"><time datetime="${d.date}">${dayText(d.date, lang)}</time></th><td class="num">${String(d.count)}</td><td class="num">${String(d.completedCount)}</td><td class="num">${formatMoney(d.completedVolume, CURRENCY, lang)}</td></tr>`)}</tbody></table>`,
  )}</details></section>`;
}

/**
 * Home (`/merchant`, every role): the balance (GetBalances), today and the last 30 days of
 * deposits and withdrawals (SummarizeDeposits, SummarizeWithdrawals: counted by the services,
 * days cut at Türkiye's midnight) and one chart per kind drawn on the server as SVG, each with
 * its table. A service that does not answer leaves its part saying so; the rest still shows.
 */
export function merchantHomePages(deps: ConsoleContext): ConsoleRoute[] {
  const summaries = (who: MerchantSignedIn, mode: Mode, from: Date, to: Date) => {
    // One mode's payments only: live and sandbox are never added together.
    const range = { merchantId: who.user.merchantId, from: timestampFromDate(from), to: timestampFromDate(to), timeZone: DEFAULT_SUMMARY_TIME_ZONE, currency: CURRENCY, sandbox: sandboxFilter(mode) };
    return [settle<Summary>(who.client(DepositService).summarizeDeposits(range)), settle<Summary>(who.client(PayoutService).summarizeWithdrawals(range))] as const;
  };
  return [
    merchantRoute(deps, { method: "GET", path: "/merchant" }, async (ctx, who) => {
      const lang = who.lang;
      const t: T = (key, params) => homeTexts(lang, key, params);
      const today = zoneDate(deps.clock.now().getTime(), DEFAULT_SUMMARY_TIME_ZONE);
      const todayStart = dayStart(today)!;
      const tomorrow = dayAfter(today)!;
      const monthStart = new Date(todayStart.getTime() - 29 * DAY_MS);
      const mode = ctx.state.mode;
      const merchantId = who.user.merchantId;
      const balanceOf = async () => {
        const [merchant, res] = await Promise.all([who.client(MerchantService).getMerchant({ merchantId }), who.client(PayoutService).getBalances({ merchantId })]);
        return { balances: res.balances, sandbox: merchant.merchant?.sandbox ?? false };
      };
      const [balance, todayDeposits, todayWithdrawals, monthDeposits, monthWithdrawals] = await Promise.all([
        settle(balanceOf()),
        ...summaries(who, mode, todayStart, tomorrow),
        ...summaries(who, mode, monthStart, tomorrow),
      ]);
      const first = zoneDate(monthStart.getTime(), DEFAULT_SUMMARY_TIME_ZONE);
      merchantPage(ctx, who, {
        title: t("home.title"),
        active: "home",
        body: html`<p>${t("home.intro")} <a href="/merchant/payments">${t("payments.link")}</a></p><p class="hint">${t(mode === "sandbox" ? "mode.sandbox" : "mode.live")}</p>
<section aria-labelledby="h-balance"><h2 id="h-balance">${t("balance.title")}</h2>${balances(balance, mode, t, lang)}</section>
<section aria-labelledby="h-today"><h2 id="h-today">${t("today.title")}</h2>${totalsTable(t("today.caption", { date: dayText(today, lang) }), todayDeposits, todayWithdrawals, t, lang)}</section>
<section aria-labelledby="h-month"><h2 id="h-month">${t("month.title")}</h2>${totalsTable(t("month.caption", { from: dayText(first, lang), to: dayText(today, lang) }), monthDeposits, monthWithdrawals, t, lang)}
<div class="grid">${chartSection("chart-deposits", t("chart.deposits"), monthDeposits, t, lang)}${chartSection("chart-withdrawals", t("chart.withdrawals"), monthWithdrawals, t, lang)}</div></section>`,
      });
    }),
  ];
}
