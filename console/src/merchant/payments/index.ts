import { Readable } from "node:stream";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { CallbackService, type CallbackEvent } from "@payments/contracts/callback";
import { DepositService, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { PayoutService, type Withdrawal } from "@payments/contracts/payout";
import { deliveryStatusFromProto, depositStatusFromProto, withdrawalStatusFromProto } from "@payments/contracts/statuses";
import { errorInfo } from "@payments/kit";
import { formatMoney as formatMajor } from "../../shared/format.js";
import { type MerchantRole } from "@payments/access";
import { CSV_BOM, CSV_DIALECTS, csvCell, csvLines, csvNumber, kurusToLira, type CsvDialect, type FileLocale } from "@payments/records";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { Language } from "../../shared/i18n.js";
import { alert, notice } from "../../shared/layout.js";
import { cursorParam, ID_PATTERN, seeOther, timeOf } from "../../shared/params.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { merchantCsrfField, merchantNotFound, merchantPage, merchantRefusal, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { attemptErrorText, codeText, eventTypeText, statusText } from "../../shared/service-texts.js";
import { createdEntry, eventEntries, finishedEntry, timelineSection, type TimelineEntry } from "../../shared/timeline.js";
import { depositAmount, depositStatus, depositsTable, modeText as mode, withdrawalStatus, withdrawalsTable } from "./tables.js";
import { byProcessId, check, depositsRequest, filterForm, filtersOf, paramsOf, tabs, withdrawalsRequest, type Checked, type Kind, type PaymentFilters } from "./filters.js";
import { paymentTexts } from "./texts.js";

type Key = Parameters<typeof paymentTexts>[1];
type T = (key: Key, params?: Record<string, string | number>) => string;
const textsOf = (lang: Language): T => (key, params) => paymentTexts(lang, key, params);

/** The list's page on screen; the CSV reads with the services' largest page (ListDeposits, ListWithdrawals: 1,000). */
const PAGE_SIZE = 50;
const CSV_PAGE = 1_000;
/** Who may download a list: the money people. */
const CSV_ROLES: readonly MerchantRole[] = ["owner", "finance"];
/** Who may send a callback again: the integration people. */
const REDELIVER_ROLES: readonly MerchantRole[] = ["owner", "developer"];

/** A status change's callback and every attempt of it: when, where, the answer, how long. */
function callbackSection(t: T, lang: Language, who: MerchantSignedIn, back: string, events: CallbackEvent[] | string): SafeHtml {
  const heading = html`<h2 id="h-callbacks">${t("callbacks.title")}</h2>`;
  if (typeof events === "string") return html`<section aria-labelledby="h-callbacks">${heading}${alert(t("callbacks.unavailable", { detail: events }))}</section>`;
  if (events.length === 0) return html`<section aria-labelledby="h-callbacks">${heading}<p>${t("callbacks.none")}</p></section>`;
  const canRedeliver = REDELIVER_ROLES.includes(who.user.role);
  return html`<section aria-labelledby="h-callbacks">${heading}${events.map((e) => {
    const delivery = t(`delivery.${deliveryStatusFromProto(e.deliveryStatus) ?? "unknown"}`);
    const attempts =
      e.attempts.length === 0
        ? html`<p>${t("callbacks.noAttempts")}</p>`
        : tableScroll(
            t("callbacks.attemptsOf", { id: e.id }),
            html`<table><caption>${t("callbacks.attemptsOf", { id: e.id })}</caption>
<thead><tr><th scope="col" class="num">${t("callbacks.number")}</th><th scope="col">${t("callbacks.at")}</th><th scope="col">${t("callbacks.url")}</th><th scope="col" class="num">${t("callbacks.statusCode")}</th><th scope="col" class="num">${t("callbacks.latency")}</th><th scope="col">${t("callbacks.outcome")}</th><th scope="col">${t("callbacks.answer")}</th></tr></thead>
<tbody>${e.attempts.map(
              (a) =>
                html`<tr><td class="num">${a.number}</td><td>${timeOf(a.attemptedAt, lang)}</td><td>${a.url ? html`<code>${a.url}</code>` : "—"}</td><td class="num">${a.statusCode || "—"}</td><td class="num">${a.latencyMs} ms</td><td class="${a.outcome === "delivered" ? "ok" : a.outcome === "failed" ? "bad" : ""}">${statusText(lang, "attempt", a.outcome)}</td><td>${a.error ? attemptErrorText(lang, a.error) : "—"}</td></tr>`,
            )}</tbody></table>`,
          );
    return html`<section class="card" aria-labelledby="${`ev-${e.id}`}"><h3 id="${`ev-${e.id}`}">${eventTypeText(lang, e.type)} · ${delivery}</h3>
<p>${t("callbacks.changedAt")}: ${timeOf(e.createdAt, lang)}${e.deliveredAt ? html` · ${t("callbacks.deliveredAt")}: ${timeOf(e.deliveredAt, lang)}` : null}${e.nextAttemptAt ? html` · ${t("callbacks.nextAttempt")}: ${timeOf(e.nextAttemptAt, lang)}` : null}</p>
${attempts}
<details><summary>${t("callbacks.body")}</summary><pre>${e.bodyJson}</pre></details>
${canRedeliver ? html`<form method="post" action="${`/merchant/events/${e.id}/redeliver`}">${merchantCsrfField(who)}<input type="hidden" name="back" value="${back}"><button type="submit" aria-describedby="${`ev-${e.id}`}">${t("callbacks.redeliver")}</button></form>` : null}
</section>`;
  })}</section>`;
}

/** Every callback event of one payment (a payment has a handful: one per status change), or why not. */
async function eventsOf(who: MerchantSignedIn, transactionId: string): Promise<CallbackEvent[] | string> {
  try {
    return (await who.client(CallbackService).listEvents({ merchantId: who.user.merchantId, transactionId, limit: 100 })).events;
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    return errorInfo(err).message;
  }
}

/** Where a redelivery returns: a payment's own page, never anything else. */
function backOf(value: string | undefined): string {
  return typeof value === "string" && /^\/merchant\/(deposits|withdrawals)\/[A-Za-z0-9_-]{1,80}$/.test(value) ? value : "/merchant/payments";
}

/** The first columns of both kinds: id, process id, created. */
function openingColumns<P extends { id: string; processId: string; createdAt?: Timestamp | undefined }>(): Array<[Key, (p: P, x: CsvDialect) => string]> {
  return [
    ["csv.id", (p) => csvCell(p.id)],
    ["csv.processId", (p, x) => csvCell(p.processId, x)],
    ["csv.created", (p) => iso(p.createdAt)],
  ];
}

/** The CSV's columns of each kind: the header's text key and the cell of one payment. */
const DEPOSIT_COLUMNS: ReadonlyArray<[Key, (d: Deposit, x: CsvDialect) => string]> = [
  ...openingColumns(),
  ["csv.status", (d, x) => csvStatus("deposit", depositStatusFromProto(d.status), x)],
  ["csv.amount", (d, x) => csvNumber(kurusToLira(d.amount), x)],
  ["csv.requested", (d, x) => csvNumber(kurusToLira(d.requestedAmount), x)],
  ["csv.currency", (d) => csvCell(d.currency)],
  ["csv.customerId", (d, x) => csvCell(d.customer?.id ?? "", x)],
  ["csv.customerName", (d, x) => csvCell(d.customer?.name ?? "", x)],
  ["csv.customerUsername", (d, x) => csvCell(d.customer?.username ?? "", x)],
  ["csv.reference", (d) => csvCell(d.reference)],
  ["csv.failure", (d, x) => csvCell(d.failureReason, x)],
  ["csv.completed", (d) => iso(d.completedAt)],
  ["csv.sandbox", (d, x) => csvYesNo(d.sandbox, x)],
];

const WITHDRAWAL_COLUMNS: ReadonlyArray<[Key, (w: Withdrawal, x: CsvDialect) => string]> = [
  ...openingColumns(),
  ["csv.status", (w, x) => csvStatus("withdrawal", withdrawalStatusFromProto(w.status), x)],
  ["csv.amount", (w, x) => csvNumber(kurusToLira(w.amount), x)],
  ["csv.currency", (w) => csvCell(w.currency)],
  ["csv.holder", (w, x) => csvCell(w.accountName, x)],
  ["csv.iban", (w) => csvCell(w.iban)],
  ["csv.userId", (w, x) => csvCell(w.userId, x)],
  ["csv.userName", (w, x) => csvCell(w.userName, x)],
  ["csv.name", (w, x) => csvCell(w.name, x)],
  ["csv.bankReference", (w, x) => csvCell(w.bankReference, x)],
  ["csv.failure", (w, x) => csvCell(w.failureReason && x === CSV_DIALECTS.tr ? codeText("tr", w.failureReason) : w.failureReason, x)],
  ["csv.completed", (w) => iso(w.completedAt)],
  ["csv.sandbox", (w, x) => csvYesNo(w.sandbox, x)],
];

/** A status in the CSV: its public code in the English file (as it always was), in words in the Turkish one. */
function csvStatus(kind: "deposit" | "withdrawal", status: string | undefined, x: CsvDialect): string {
  if (!status) return "";
  return x === CSV_DIALECTS.tr ? csvCell(statusText("tr", kind, status), x) : status;
}

function csvYesNo(value: boolean, x: CsvDialect): string {
  if (x === CSV_DIALECTS.tr) return value ? "evet" : "hayır";
  return value ? "true" : "false";
}

function iso(at: Timestamp | undefined): string {
  return at ? timestampDate(at).toISOString() : "";
}

/** One kind's reads as the user: its CSV columns, its table, the one payment of a process id, and a page of its list. */
interface Source<P> {
  columns: ReadonlyArray<[Key, (p: P, x: CsvDialect) => string]>;
  table: (t: T, lang: Language, list: P[]) => SafeHtml;
  one: () => Promise<P[]>;
  page: (limit: number, cursor: string) => Promise<{ list: P[]; next: string }>;
}

function depositSource(who: MerchantSignedIn, f: PaymentFilters, c: Checked): Source<Deposit> {
  const deposits = who.client(DepositService);
  return { columns: DEPOSIT_COLUMNS, table: depositsTable, one: () => byProcessId(c.sandbox, async () => (await deposits.getDeposit({ merchantId: who.user.merchantId, key: { case: "processId", value: f.processId } })).deposit), page: async (limit, cursor) => deposits.listDeposits(depositsRequest(who, f, c, limit, cursor)).then((res) => ({ list: res.deposits, next: res.nextCursor })) };
}

function withdrawalSource(who: MerchantSignedIn, f: PaymentFilters, c: Checked): Source<Withdrawal> {
  const payouts = who.client(PayoutService);
  return { columns: WITHDRAWAL_COLUMNS, table: withdrawalsTable, one: () => byProcessId(c.sandbox, async () => (await payouts.getWithdrawal({ merchantId: who.user.merchantId, key: { case: "processId", value: f.processId } })).withdrawal), page: async (limit, cursor) => payouts.listWithdrawals(withdrawalsRequest(who, f, c, limit, cursor)).then((res) => ({ list: res.withdrawals, next: res.nextCursor })) };
}

/** The list's table of one page (or of the one payment of a process id) and the next page's cursor. */
async function tableOf<P>(t: T, lang: Language, f: PaymentFilters, source: Source<P>, cursor: string): Promise<{ table: SafeHtml; next: string }> {
  if (f.processId) return { table: html`<p class="hint">${t("filter.processIdAlone")}</p>${source.table(t, lang, await source.one())}`, next: "" };
  const res = await source.page(PAGE_SIZE, cursor);
  return { table: source.table(t, lang, res.list), next: res.next };
}

/** The CSV's header row, and its rows of one page (every payment of a process id at once), as `locale` writes them. */
function csvOf<P>(f: PaymentFilters, source: Source<P>, locale: FileLocale): { head: string; fetchPage: (cursor: string) => Promise<{ rows: string; next: string }> } {
  const dialect = CSV_DIALECTS[locale];
  const rows = (list: P[]) => csvLines(list.map((p) => source.columns.map(([, cell]) => cell(p, dialect))), dialect);
  return {
    head: csvLines([source.columns.map(([k]) => csvCell(paymentTexts(locale, k), dialect))], dialect),
    fetchPage: f.processId ? async () => ({ rows: rows(await source.one()), next: "" }) : async (cursor) => source.page(CSV_PAGE, cursor).then((res) => ({ rows: rows(res.list), next: res.next })),
  };
}

/**
 * Payments (issue 24), every role: `/merchant/payments?kind=deposits|withdrawals` with
 * ListDeposits' and ListWithdrawals' filters (status, created from/to in Türkiye days, amount,
 * customer id and name prefix or holder name prefix, reference) paged by the service's cursor,
 * and a process id that finds one payment (GetDeposit/GetWithdrawal); one payment with its
 * timeline and every callback attempt (ListEvents, attempts included); "send again" per event
 * (RedeliverEvent: owner, developer); the filtered list as CSV (owner, finance), every page
 * streamed as it arrives. Every call is the user's, scoped by the services to the user's
 * merchant: another merchant's id is NOT_FOUND, shown as this dashboard's 404.
 */
export function merchantPaymentPages(deps: ConsoleContext): ConsoleRoute[] {
  const detailOf = async (ctx: ConsoleContextKoa, who: MerchantSignedIn, kind: Kind, id: string) => {
    const lang = who.lang;
    const t = textsOf(lang);
    if (!ID_PATTERN.test(id)) return merchantNotFound(ctx, who, "payments");
    const merchantId = who.user.merchantId;
    // The payment's callbacks are asked beside the payment itself (scoped to the merchant: another's id finds none).
    const eventsAsked = eventsOf(who, id);
    eventsAsked.catch(() => undefined); // awaited below; a page that ends early must not leave it unhandled
    const title = t(kind === "deposits" ? "deposit.title" : "withdrawal.title", { id });
    let facts: SafeHtml;
    let entries: TimelineEntry[];
    try {
      if (kind === "deposits") {
        const d = (await who.client(DepositService).getDeposit({ merchantId, key: { case: "depositId", value: id } })).deposit;
        if (!d) return merchantNotFound(ctx, who, "payments");
        facts = html`<dl class="facts card">
<dt>${t("col.customer")}</dt><dd>${d.customer ? `${d.customer.name} (${d.customer.id || "—"})` : "—"}</dd>
<dt>${t("col.status")}</dt><dd>${depositStatus(t, d.status)}</dd>
<dt>${t("detail.requested")}</dt><dd>${formatMajor(d.requestedAmount, d.currency, lang)}</dd>
<dt>${t("detail.received")}</dt><dd>${d.status === DepositStatus.COMPLETED ? depositAmount(t, lang, d) : "—"}</dd>
<dt>${t("col.processId")}</dt><dd>${d.processId}</dd>
<dt>${t("col.reference")}</dt><dd><code>${d.reference}</code></dd>
<dt>${t("detail.customerUsername")}</dt><dd>${d.customer?.username || "—"}</dd>
<dt>${t("detail.paidTo")}</dt><dd>${d.assignedAccount ? html`<code>${d.assignedAccount.iban}</code> · ${d.assignedAccount.bankName}` : "—"}</dd>
<dt>${t("col.mode")}</dt><dd>${mode(t, d.sandbox)}</dd>
<dt>${t("detail.failure")}</dt><dd>${d.failureReason || "—"}</dd>
<dt>${t("col.created")}</dt><dd>${timeOf(d.createdAt, lang)}</dd>
<dt>${t("detail.expires")}</dt><dd>${timeOf(d.expiresAt, lang) ?? "—"}</dd>
<dt>${t("detail.final")}</dt><dd>${timeOf(d.completedAt, lang) ?? "—"}</dd>
</dl>`;
        entries = [createdEntry(lang, d.createdAt, formatMajor(d.requestedAmount, d.currency, lang))];
        if (d.completedAt) entries.push(finishedEntry(lang, d.completedAt, "deposit", depositStatusFromProto(d.status) ?? "unknown", d.failureReason || undefined));
      } else {
        const w = (await who.client(PayoutService).getWithdrawal({ merchantId, key: { case: "withdrawalId", value: id } })).withdrawal;
        if (!w) return merchantNotFound(ctx, who, "payments");
        facts = html`<dl class="facts card">
<dt>${t("col.holder")}</dt><dd>${w.accountName}</dd>
<dt>${t("col.status")}</dt><dd>${withdrawalStatus(t, w, lang)}</dd>
<dt>${t("col.amount")}</dt><dd>${formatMajor(w.amount, w.currency, lang)}</dd>
<dt>${t("col.processId")}</dt><dd>${w.processId}</dd>
<dt>${t("detail.iban")}</dt><dd><code>${w.iban}</code></dd>
<dt>${t("detail.user")}</dt><dd>${w.name || w.userName || w.userId ? `${w.name || "—"} (${w.userName || "—"}, ${w.userId || "—"})` : "—"}</dd>
<dt>${t("detail.bankReference")}</dt><dd>${w.bankReference || "—"}</dd>
<dt>${t("col.mode")}</dt><dd>${mode(t, w.sandbox)}</dd>
<dt>${t("col.created")}</dt><dd>${timeOf(w.createdAt, lang)}</dd>
<dt>${t("detail.final")}</dt><dd>${timeOf(w.completedAt, lang) ?? "—"}</dd>
</dl>`;
        entries = [createdEntry(lang, w.createdAt, formatMajor(w.amount, w.currency, lang))];
        if (w.completedAt) entries.push(finishedEntry(lang, w.completedAt, "withdrawal", withdrawalStatusFromProto(w.status) ?? "unknown", w.failureReason ? codeText(lang, w.failureReason) : undefined));
      }
    } catch (err) {
      if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) return merchantNotFound(ctx, who, "payments");
      return merchantRefusal(ctx, who, err, { title, active: "payments" });
    }
    const events = await eventsAsked;
    const redelivered = cursorParam(ctx.query.redelivered);
    const back = `/merchant/${kind}/${id}`;
    merchantPage(ctx, who, {
      title,
      active: "payments",
      body: html`${redelivered ? notice(t("callbacks.redelivered", { id: redelivered })) : null}<p><a href="${`/merchant/payments?kind=${kind}`}">${t("detail.back")}</a></p>
${facts}
${timelineSection(lang, [...entries, ...(typeof events === "string" ? [] : eventEntries(lang, events))])}
${callbackSection(t, lang, who, back, events)}`,
    });
  };

  return [
    merchantRoute(deps, { method: "GET", path: "/merchant/payments" }, async (ctx, who) => {
      const lang = who.lang;
      const t = textsOf(lang);
      const f = filtersOf(ctx.query);
      const c = check(f, who.lang, ctx.state.mode);
      const cursor = cursorParam(ctx.query.cursor);
      const csvLinks = CSV_ROLES.includes(who.user.role)
        ? html`<p><a href="${`/merchant/payments.csv?${paramsOf(f).toString()}`}" download>${t("list.csv")}</a> · <a href="${`/merchant/payments.csv?${paramsOf(f, { locale: "tr" }).toString()}`}" download>${t("list.csvTr")}</a></p>`
        : null;
      const page = (body: SafeHtml, status = 200) =>
        merchantPage(ctx, who, { title: t("payments.title"), active: "payments", body: html`<p>${t("payments.intro")}</p><p class="hint">${t(c.sandbox ? "mode.listSandbox" : "mode.listLive")}</p>${tabs(t, f.kind)}${filterForm(t, f, c.invalid)}${csvLinks}${body}` }, status);
      if (c.invalid.size > 0) return page(html``, 400);
      try {
        const { table, next } = f.kind === "deposits" ? await tableOf(t, lang, f, depositSource(who, f, c), cursor) : await tableOf(t, lang, f, withdrawalSource(who, f, c), cursor);
        if (f.processId) return page(table);
        const links = [
          cursor ? html`<li><a href="${`/merchant/payments?${paramsOf(f).toString()}`}">${t("list.first")}</a></li>` : null,
          next ? html`<li><a href="${`/merchant/payments?${paramsOf(f, { cursor: next }).toString()}`}" rel="next">${t("list.next")}</a></li>` : null,
        ].filter((l) => l !== null);
        page(html`${table}${links.length > 0 ? html`<nav aria-label="${t("list.pager")}"><ul>${links}</ul></nav>` : null}`);
      } catch (err) {
        merchantRefusal(ctx, who, err, { title: t("payments.title"), active: "payments" });
      }
    }),
    merchantRoute(deps, { method: "GET", path: "/merchant/payments.csv", roles: CSV_ROLES }, async (ctx, who) => {
      const t = textsOf(who.lang);
      const f = filtersOf(ctx.query);
      const c = check(f, who.lang, ctx.state.mode);
      const locale: FileLocale = ctx.query.locale === "tr" ? "tr" : "en";
      if (c.invalid.size > 0) return merchantPage(ctx, who, { title: t("payments.title"), active: "payments", body: html`${tabs(t, f.kind)}${filterForm(t, f, c.invalid)}` }, 400);
      // Each page is written as it arrives: memory stays one page, whatever the list's length.
      type Page = { rows: string; next: string };
      const { head, fetchPage } = f.kind === "deposits" ? csvOf(f, depositSource(who, f, c), locale) : csvOf(f, withdrawalSource(who, f, c), locale);
      let first: Page;
      try {
        // The first page before any byte: a refusal is still a page with its status.
        first = await fetchPage("");
      } catch (err) {
        return merchantRefusal(ctx, who, err, { title: t("payments.title"), active: "payments" });
      }
      async function* body(): AsyncGenerator<string> {
        yield CSV_BOM + head + first.rows;
        let cursor = first.next;
        while (cursor !== "") {
          const next = await fetchPage(cursor);
          yield next.rows;
          cursor = next.next;
        }
      }
      ctx.status = 200;
      ctx.type = "text/csv; charset=utf-8";
      ctx.set("Content-Disposition", `attachment; filename="${f.kind}.csv"`);
      ctx.body = Readable.from(body(), { objectMode: false });
    }),
    merchantRoute(deps, { method: "GET", path: "/merchant/deposits/:id" }, (ctx, who) => detailOf(ctx, who, "deposits", ctx.params.id ?? "")),
    merchantRoute(deps, { method: "GET", path: "/merchant/withdrawals/:id" }, (ctx, who) => detailOf(ctx, who, "withdrawals", ctx.params.id ?? "")),
    merchantRoute(deps, { method: "POST", path: "/merchant/events/:id/redeliver", roles: REDELIVER_ROLES }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      if (!ID_PATTERN.test(id)) return merchantNotFound(ctx, who, "payments");
      const back = backOf(ctx.state.form?.back);
      try {
        await who.client(CallbackService).redeliverEvent({ merchantId: who.user.merchantId, eventId: id });
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) return merchantNotFound(ctx, who, "payments");
        return merchantRefusal(ctx, who, err, { active: "payments" });
      }
      seeOther(ctx, `${back}${back.includes("?") ? "&" : "?"}redelivered=${encodeURIComponent(id)}`);
    }),
  ];
}
