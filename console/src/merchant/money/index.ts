import type { Language } from "../../i18n.js";
import { formatMajorPlain } from "../../shared/format.js";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { BankCatalogService, type AvailableBank } from "@payments/contracts/bank-catalog";
import { MerchantService, type Merchant } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus, type Approval } from "@payments/contracts/operator";
import { PayoutService, type Balance, type GetStatementResponse } from "@payments/contracts/payout";
import { errorInfo } from "@payments/kit";
import {
  createWithdrawalBody,
  createWithdrawalRequest,
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
import type { ConsoleContext } from "../../context.js";
import { html, SafeHtml } from "../../html.js";
import { alert, field, notice } from "../../layout.js";
import { cursorParam, ID_PATTERN, linkTo, minorUnits, money, seeOther, timeOf } from "../../pages/operator-call.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { changeThenSeeOther, merchantCsrfField, merchantNotFound, merchantPage, merchantRefusal, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { apiApprovalRoutes, apiApprovalsSection, waitingApiWithdrawals } from "./api-approvals.js";
import { moneyTexts } from "./texts.js";

/** Who works with the merchant's money: the statement, withdrawals and their approvals. */
const MONEY_ROLES = ["owner", "finance"] as const;
/** Lines of a statement on one page; the CSV has them all. */
const STATEMENT_PAGE_LINES = 100;
/** Lines asked of the payout service per page while the CSV streams (as the gateway's statement). */
const CSV_PAGE_LINES = 1000;
const TIME_ZONE = "Europe/Istanbul";
/** A withdrawal form's one-time token: the processId's random part, so a double submit is the same withdrawal. */
const FORM_TOKEN = /^[A-Za-z0-9_-]{22}$/;
const PROCESS_ID_PREFIX = "dashboard-";

type T = (key: Parameters<typeof moneyTexts>[1], params?: Record<string, string | number>) => string;
const textsOf = (who: MerchantSignedIn): T => (key, params) => moneyTexts(who.lang, key, params);

/** A YYYY-MM-DD date as the epoch ms of that whole UTC day's start (the API's statement days), or undefined. */
export function utcDay(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value}T00:00:00.000Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? undefined : ms;
}

/** This month so far, by the calendar in Türkiye: the default statement period. */
export function thisMonth(now: Date): { from: string; to: string } {
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: TIME_ZONE, year: "numeric", month: "2-digit", day: "2-digit" }).format(now);
  return { from: `${today.slice(0, 8)}01`, to: today };
}

interface StatementAsk {
  from: string;
  to: string;
  /** The range asked of the service, or the problem of a date. */
  period: { startMs: number; endMs: number; from: string; to: string } | { field: "from" | "to"; problem: string };
}

function statementAsk(query: Record<string, unknown>, now: Date, t: T): StatementAsk {
  const given = (v: unknown) => (typeof v === "string" ? v.trim() : "");
  const fallback = thisMonth(now);
  const from = given(query.from) || fallback.from;
  const to = given(query.to) || fallback.to;
  const fromMs = utcDay(from);
  const toMs = utcDay(to);
  if (fromMs === undefined) return { from, to, period: { field: "from", problem: t("statement.badDate") } };
  if (toMs === undefined) return { from, to, period: { field: "to", problem: t("statement.badDate") } };
  const period = statementPeriod(fromMs, toMs);
  return { from, to, period: "problem" in period ? { field: "to", problem: period.problem } : period };
}

function kindText(t: T, kind: StatementMovement["kind"]): string {
  return t(`kind.${kind}`);
}

function movementLink(m: StatementMovement): SafeHtml | string {
  if (m.transactionId.startsWith("dep_")) return html`<a href="${`/merchant/deposits/${m.transactionId}`}">${m.transactionId}</a>`;
  if (m.transactionId.startsWith("wdr_")) return html`<a href="${`/merchant/withdrawals/${m.transactionId}`}">${m.transactionId}</a>`;
  return m.transactionId;
}

function statementSection(t: T, lang: Language, ask: StatementAsk, result: { record: StatementRecord; next: string; cursor: string } | { error: SafeHtml } | undefined): SafeHtml {
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
    content = html`<dl class="facts card">
<dt>${t("statement.opening")}</dt><dd>${money(record.openingBalance, cur, lang)}</dd>
<dt>${t("statement.closing")}</dt><dd>${money(record.closingBalance, cur, lang)}</dd>
<dt>${t("statement.net")}</dt><dd>${money(record.closingBalance - record.openingBalance, cur, lang)}</dd>
</dl>
<p><a href="${csv("en")}" download>${t("statement.csv")}</a> · <a href="${csv("tr")}" download>${t("statement.csvTr")}</a></p>
${
  record.movements.length === 0
    ? html`<p>${t("statement.empty")}</p>`
    : tableScroll(
        t("statement.caption", { from: record.from, to: record.to }),
        html`<table><caption>${t("statement.caption", { from: record.from, to: record.to })}</caption>
<thead><tr><th scope="col">${t("statement.time")}</th><th scope="col">${t("statement.kind")}</th><th scope="col" class="num">${t("statement.amount")}</th><th scope="col" class="num">${t("statement.balanceAfter")}</th><th scope="col">${t("statement.transaction")}</th><th scope="col">${t("statement.processId")}</th></tr></thead>
<tbody>${record.movements.map(
          (m) =>
            html`<tr><td><time datetime="${m.at}">${m.at.replace("T", " ").slice(0, 19)}</time></td><td>${kindText(t, m.kind)}</td><td class="num">${money(m.amount, cur, lang)}</td><td class="num">${money(m.balanceAfter, cur, lang)}</td><td>${movementLink(m)}</td><td>${m.processId ?? "—"}</td></tr>`,
        )}</tbody></table>`,
      )
}
<nav aria-label="${t("statement.caption", { from: record.from, to: record.to })}"><ul>${cursor ? html`<li><a href="${linkTo("/merchant/money", { from: record.from, to: record.to })}">${t("statement.first")}</a></li>` : null}${next ? html`<li><a href="${linkTo("/merchant/money", { from: record.from, to: record.to, cursor: next })}" rel="next">${t("statement.next")}</a></li>` : null}</ul></nav>`;
  }
  return html`<section aria-labelledby="h-statement"><h2 id="h-statement">${t("statement.title")}</h2>
<p class="hint">${t("statement.intro", { max: STATEMENT_MAX_DAYS })}</p>${form}${content}</section>`;
}

interface WithdrawState {
  form?: Record<string, string>;
  errors?: Record<string, string>;
  message?: SafeHtml | null;
}

function withdrawSection(who: MerchantSignedIn, t: T, banks: readonly AvailableBank[], state: WithdrawState): SafeHtml {
  const form = state.form ?? {};
  const err = (name: string) => state.errors?.[name];
  const token = FORM_TOKEN.test(form.formToken ?? "") ? form.formToken! : randomBytes(16).toString("base64url");
  return html`<section aria-labelledby="h-withdraw"><h2 id="h-withdraw">${t("withdraw.title")}</h2>
<p class="hint">${t("withdraw.intro")}</p>${state.message ?? null}
<form method="post" action="/merchant/money/withdrawals" class="card">${merchantCsrfField(who)}<input type="hidden" name="formToken" value="${token}">
${field({ id: "withdraw-amount", name: "amount", label: t("withdraw.amount"), inputmode: "numeric", required: true, value: form.amount ?? "", hint: t("withdraw.amountHint"), error: err("amount") })}
${field({ id: "withdraw-iban", name: "iban", label: t("withdraw.iban"), required: true, value: form.iban ?? "", autocomplete: "off", error: err("iban") })}
${field({ id: "withdraw-holder", name: "accountName", label: t("withdraw.holder"), required: true, value: form.accountName ?? "", error: err("accountName") })}
<label for="withdraw-bank">${t("withdraw.bank")}</label>
<select id="withdraw-bank" name="bankId"${err("bankId") ? html` aria-invalid="true" aria-describedby="withdraw-bank-error"` : null}><option value="">${t("withdraw.anyBank")}</option>${banks.map((b) => html`<option value="${b.id}"${form.bankId === b.id ? html` selected` : null}>${b.name}</option>`)}</select>
${err("bankId") ? html`<p class="error" id="withdraw-bank-error">${err("bankId")}</p>` : null}
<button type="submit">${t("withdraw.submit")}</button></form></section>`;
}

function approvalsSection(who: MerchantSignedIn, t: T, approvals: readonly Approval[] | SafeHtml, banner: SafeHtml | null): SafeHtml {
  const list =
    !isHtml(approvals)
      ? approvals.length === 0
        ? html`<p>${t("approvals.empty")}</p>`
        : tableScroll(
            t("approvals.caption"),
            html`<table><caption>${t("approvals.caption")}</caption>
<thead><tr><th scope="col">${t("approvals.id")}</th><th scope="col">${t("approvals.what")}</th><th scope="col">${t("approvals.maker")}</th><th scope="col">${t("approvals.created")}</th><th scope="col">${t("approvals.expires")}</th><th scope="col">${t("approvals.decide")}</th></tr></thead>
<tbody>${approvals.map(
              (a) => html`<tr><td><code>${a.id}</code></td><td>${a.summary}</td><td>${a.maker}</td><td>${timeOf(a.createdAt, who.lang)}</td><td>${timeOf(a.expiresAt, who.lang)}</td>
<td><form method="post" action="${`/merchant/money/approvals/${a.id}/approve`}" class="inline">${merchantCsrfField(who)}<button type="submit">${t("approvals.approve")}</button></form>
<form method="post" action="${`/merchant/money/approvals/${a.id}/reject`}">${merchantCsrfField(who)}<label for="${`reject-${a.id}`}">${t("approvals.reason")}</label><input id="${`reject-${a.id}`}" name="reason" maxlength="500"><button type="submit">${t("approvals.reject")}</button></form></td></tr>`,
            )}</tbody></table>`,
          )
      : approvals;
  return html`<section aria-labelledby="approvals"><h2 id="approvals" tabindex="-1">${t("approvals.title")}</h2><p class="hint">${t("approvals.intro")}</p>${banner}${list}</section>`;
}

function thresholdSection(who: MerchantSignedIn, t: T, merchant: Merchant | undefined, state: { value?: string; error?: string; banner?: SafeHtml | null }): SafeHtml | null {
  if (!merchant) return null;
  const threshold = merchant.withdrawalApprovalThreshold;
  const current = html`<p>${threshold === undefined ? t("threshold.none") : t("threshold.current", { amount: money(threshold, "TRY", who.lang) })}</p>`;
  const form =
    who.user.role === "owner"
      ? html`<form method="post" action="/merchant/money/threshold" class="card">${merchantCsrfField(who)}
${field({ id: "threshold-amount", name: "threshold", label: t("threshold.amount"), inputmode: "numeric", value: state.value ?? (threshold === undefined ? "" : formatMajorPlain(threshold, who.lang)), hint: t("threshold.hint"), error: state.error })}
<button type="submit">${t("threshold.submit")}</button></form>`
      : null;
  return html`<section aria-labelledby="h-threshold"><h2 id="h-threshold">${t("threshold.title")}</h2>${state.banner ?? null}${current}${form}</section>`;
}


function balancesTable(t: T, lang: Language, balances: readonly Balance[]): SafeHtml | null {
  if (balances.length === 0) return null;
  return tableScroll(
    t("balance.caption"),
    html`<table><caption>${t("balance.caption")}</caption><thead><tr><th scope="col">${t("balance.currency")}</th><th scope="col" class="num">${t("balance.available")}</th><th scope="col" class="num">${t("balance.held")}</th></tr></thead>
<tbody>${balances.map((b) => html`<tr><td>${b.currency}</td><td class="num">${money(b.available, b.currency, lang)}</td><td class="num">${money(b.held, b.currency, lang)}</td></tr>`)}</tbody></table>`,
  );
}

const isHtml = (value: unknown): value is SafeHtml => value instanceof SafeHtml;

/** A call whose refusal the page shows in place of its section (the rest of the page still works). */
async function orAlert<R>(who: MerchantSignedIn, call: () => Promise<R>): Promise<R | SafeHtml> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    return alert(refusalText(who, err)) ?? html``;
  }
}

/** A service's refusal in words, for a message inside a page (the whole-page refusals are merchantRefusal's). */
function refusalText(who: MerchantSignedIn, err: ConnectError): string {
  const info = errorInfo(err);
  return who.lang === "tr" ? `Servis reddetti (${info.reason ?? Code[info.code]}): ${info.message}` : `The service refused (${info.reason ?? Code[info.code]}): ${info.message}`;
}

export interface MoneyState {
  withdraw?: WithdrawState;
  threshold?: { value?: string; error?: string; banner?: SafeHtml | null };
  approvalsBanner?: SafeHtml | null;
}

/**
 * The Money page (`/merchant/money`, owner and finance): balances, the statement of a period
 * (the API's numbers: @payments/records' statement), a withdrawal to a TR IBAN (the API's body
 * schema, then PayoutService.createWithdrawal, which asks for a second user above the
 * merchant's threshold), the approvals that wait, and the threshold (the owner sets it). The
 * services scope every call to the user's merchant and decide who may; the page only offers.
 */
export function merchantMoneyPages(deps: ConsoleContext): ConsoleRoute[] {
  const show = async (ctx: ConsoleContextKoa, who: MerchantSignedIn, state: MoneyState, status = 200) => {
    const t = textsOf(who);
    const merchantId = who.user.merchantId;
    const payouts = who.client(PayoutService);
    const ask = statementAsk(ctx.query, deps.clock.now(), t);
    const cursor = cursorParam(ctx.query.cursor);
    const period = "field" in ask.period ? undefined : ask.period;
    // Only the bank list waits for the merchant (its kind picks the banks); the rest is asked at once.
    const merchantAsked = orAlert(who, async () => (await who.client(MerchantService).getMerchant({ merchantId })).merchant);
    const [merchant, balances, statement, banks, approvals, apiWaiting] = await Promise.all([
      merchantAsked,
      orAlert(who, async () => (await payouts.getBalances({ merchantId })).balances),
      period ? orAlert(who, () => payouts.getStatement({ merchantId, currency: "", fromMs: BigInt(period.startMs), toMs: BigInt(period.endMs), limit: STATEMENT_PAGE_LINES, cursor })) : Promise.resolve(undefined),
      merchantAsked.then((m) => orAlert(who, async () => (await who.client(BankCatalogService).listAvailableBanks({ merchantId, sandbox: isHtml(m) ? false : (m?.sandbox ?? false) })).banks)),
      orAlert(who, async () => (await who.client(ApprovalService, "payout").listApprovals({ status: ApprovalStatus.PENDING, limit: 50 })).approvals),
      orAlert(who, () => waitingApiWithdrawals(who)),
    ]);
    if (!period && status === 200) status = 400;
    const statementResult = !period || statement === undefined ? undefined : isHtml(statement) ? { error: statement } : { record: statementRecord(statement, period.from, period.to), next: statement.nextCursor, cursor };
    const created = typeof ctx.query.created === "string" && ID_PATTERN.test(ctx.query.created) ? ctx.query.created : "";
    const waits = typeof ctx.query.approval === "string" && ID_PATTERN.test(ctx.query.approval) ? ctx.query.approval : "";
    const withdrawState: WithdrawState = state.withdraw ?? {
      message: created
        ? html`<div class="notice" role="status">${t("withdraw.created", { id: created })} <a href="${`/merchant/withdrawals/${created}`}">${t("withdraw.open")}</a></div>`
        : waits
          ? notice(t("withdraw.waits", { id: waits }))
          : null,
    };
    let approvalsBanner = state.approvalsBanner ?? null;
    const decided = typeof ctx.query.decided === "string" && ID_PATTERN.test(ctx.query.decided) ? ctx.query.decided : "";
    if (!approvalsBanner && decided) {
      const outcome = typeof ctx.query.outcome === "string" && /^[A-Za-z_]{1,60}$/.test(ctx.query.outcome) ? ctx.query.outcome : "";
      approvalsBanner = notice(outcome ? t("approvals.approved", { id: decided, outcome }) : t("approvals.rejected", { id: decided }));
    }
    if (!waits && !created && ctx.query.threshold === "saved" && !state.threshold) state = { ...state, threshold: { banner: notice(t("threshold.saved")) } };
    merchantPage(
      ctx,
      who,
      {
        title: t("title"),
        active: "money",
        body: html`${isHtml(balances) ? balances : balancesTable(t, who.lang, balances)}
${statementSection(t, who.lang, ask, statementResult)}
${withdrawSection(who, t, isHtml(banks) ? [] : banks, withdrawState)}
${approvalsSection(who, t, approvals, approvalsBanner)}
${apiApprovalsSection(who, apiWaiting, ctx.query)}
${isHtml(merchant) ? merchant : thresholdSection(who, t, merchant, state.threshold ?? {})}`,
      },
      status,
    );
  };

  return [
    merchantRoute(deps, { method: "GET", path: "/merchant/money", roles: MONEY_ROLES }, async (ctx, who) => show(ctx, who, {})),
    merchantRoute(deps, { method: "GET", path: "/merchant/statement.csv", roles: MONEY_ROLES }, async (ctx, who) => {
      const t = textsOf(who);
      const ask = statementAsk(ctx.query, deps.clock.now(), t);
      if ("field" in ask.period) return show(ctx, who, {}, 400);
      const { startMs, endMs, from, to } = ask.period;
      const locale: FileLocale = ctx.query.locale === "tr" ? "tr" : "en";
      const merchantId = who.user.merchantId;
      const payouts = who.client(PayoutService);
      const page = (cursor: string) => payouts.getStatement({ merchantId, currency: "", fromMs: BigInt(startMs), toMs: BigInt(endMs), limit: CSV_PAGE_LINES, cursor });
      let first: GetStatementResponse;
      try {
        // The first page before any header: a refusal is still a page with its status.
        first = await page("");
      } catch (err) {
        return merchantRefusal(ctx, who, err, { title: t("statement.title"), active: "money" });
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
    }),
    merchantRoute(deps, { method: "POST", path: "/merchant/money/withdrawals", roles: MONEY_ROLES }, async (ctx, who) => {
      const t = textsOf(who);
      const form = ctx.state.form ?? {};
      const token = form.formToken ?? "";
      if (!FORM_TOKEN.test(token)) return show(ctx, who, { withdraw: { form: { ...form, formToken: "" }, message: alert(t("withdraw.badToken")) } }, 400);
      const amount = minorUnits(form.amount ?? "", who.lang);
      const errors: Record<string, string> = {};
      if (amount === undefined || amount <= 0n || amount > BigInt(Number.MAX_SAFE_INTEGER)) errors.amount = t("withdraw.badAmount");
      // The API's own body schema: the same shapes, lengths and characters as POST /v1/withdraw.
      const parsed = createWithdrawalBody.safeParse({
        processId: `${PROCESS_ID_PREFIX}${token}`,
        amount: amount === undefined || errors.amount ? 1 : Number(amount),
        bankId: (form.bankId ?? "").trim() || undefined,
        accountName: form.accountName ?? "",
        iban: form.iban ?? "",
        userId: who.user.id,
        userName: who.user.email,
        name: who.user.displayName || who.user.email,
      });
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const name = String(issue.path[0] ?? "");
          const label = name === "iban" ? t("withdraw.iban") : name === "accountName" ? t("withdraw.holder") : name === "bankId" ? t("withdraw.bank") : name;
          errors[name] ??= `${label}: ${issue.message}`;
        }
      }
      if (Object.keys(errors).length > 0) {
        const general = Object.entries(errors).filter(([k]) => !["amount", "iban", "accountName", "bankId"].includes(k));
        return show(ctx, who, { withdraw: { form, errors, message: general.length > 0 ? alert(general.map(([, v]) => v).join("; ")) : null } }, 400);
      }
      const body = parsed.data!;
      try {
        const res = await who.client(PayoutService).createWithdrawal(createWithdrawalRequest(who.user.merchantId, body));
        return seeOther(ctx, `${linkTo("/merchant/money", { created: res.withdrawal?.id })}#h-withdraw`);
      } catch (err) {
        if (!(err instanceof ConnectError)) throw err;
        const info = errorInfo(err);
        const approvalId = info.details?.approvalId;
        if (info.reason === "APPROVAL_REQUIRED" && approvalId && ID_PATTERN.test(approvalId)) return seeOther(ctx, `${linkTo("/merchant/money", { approval: approvalId })}#approvals`);
        const existing = info.details?.transactionId;
        // The same form sent twice: the same processId, so the withdrawal made the first time.
        if (info.reason === "DUPLICATE_TRANSACTION" && existing && ID_PATTERN.test(existing)) return seeOther(ctx, `${linkTo("/merchant/money", { created: existing })}#h-withdraw`);
        if (info.code === Code.InvalidArgument || info.code === Code.FailedPrecondition || info.code === Code.OutOfRange) {
          const where = info.field === "iban" ? "iban" : info.field === "account_name" ? "accountName" : info.field === "bank_id" ? "bankId" : info.field === "amount" ? "amount" : "";
          const message = refusalText(who, err);
          return show(ctx, who, { withdraw: { form, ...(where ? { errors: { [where]: message } } : {}), message: alert(message) } }, info.code === Code.InvalidArgument ? 400 : 409);
        }
        return merchantRefusal(ctx, who, err, { title: t("withdraw.title"), active: "money" });
      }
    }),
    merchantRoute(deps, { method: "POST", path: "/merchant/money/approvals/:id/:decision", roles: MONEY_ROLES }, async (ctx, who) => {
      const t = textsOf(who);
      const id = ctx.params.id ?? "";
      const decision = ctx.params.decision;
      if (!ID_PATTERN.test(id) || (decision !== "approve" && decision !== "reject")) return merchantNotFound(ctx, who, "money");
      const approvals = who.client(ApprovalService, "payout");
      try {
        if (decision === "approve") {
          const res = await approvals.approve({ id, note: "" });
          return seeOther(ctx, `${linkTo("/merchant/money", { decided: id, outcome: res.approval?.outcome || "ok" })}#approvals`);
        }
        await approvals.reject({ id, reason: String(ctx.state.form?.reason ?? "").trim().slice(0, 500) });
        return seeOther(ctx, `${linkTo("/merchant/money", { decided: id })}#approvals`);
      } catch (err) {
        return merchantRefusal(ctx, who, err, { title: t("approvals.title"), active: "money" });
      }
    }),
    ...apiApprovalRoutes(deps),
    merchantRoute(deps, { method: "POST", path: "/merchant/money/threshold", roles: ["owner"] }, async (ctx, who) => {
      const t = textsOf(who);
      const value = String(ctx.state.form?.threshold ?? "").trim();
      const threshold = value === "" ? undefined : minorUnits(value, who.lang);
      if (value !== "" && (threshold === undefined || threshold <= 0n)) return show(ctx, who, { threshold: { value, error: t("withdraw.badAmount") } }, 400);
      const change = () => who.client(MerchantService).setWithdrawalApproval({ merchantId: who.user.merchantId, ...(threshold !== undefined ? { threshold } : {}) });
      const refused = (err: unknown) => merchantRefusal(ctx, who, err, { title: t("threshold.title"), active: "money" });
      return changeThenSeeOther(ctx, change, refused, "/merchant/money?threshold=saved#h-threshold");
    }),
  ];
}
