import type { Language } from "../../shared/i18n.js";
import { formatMajorPlain, formatMoney } from "../../shared/format.js";
import { ConnectError } from "@connectrpc/connect";
import { MerchantService, type Merchant } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus, type Approval } from "@payments/contracts/operator";
import { PayoutService, type Balance } from "@payments/contracts/payout";
import { samePerson } from "../../identity/approvals.js";
import type { ConsoleContext } from "../../context.js";
import { html, SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import { cursorParam, ID_PATTERN, linkTo, minorUnits, seeOther, timeOf } from "../../shared/params.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { changeThenSeeOther, merchantCsrfField, merchantNotFound, merchantPage, merchantRefusal, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { apiApprovalRoutes, apiApprovalsSection, waitingApiWithdrawals } from "./api-approvals.js";
import { statementDetails } from "./statement-details.js";
import { statementAsk, statementCsv, statementOf, statementSection, type StatementPage } from "./statement.js";
import { moneyTexts } from "./texts.js";
import { modeOfAccount, otherModeNotice, refusalText, withdrawBanner, withdrawRoutes, withdrawSection, type WithdrawState } from "./withdraw.js";

export { thisMonth, utcDay } from "./statement.js";

/** Who works with the merchant's money: the statement, withdrawals and their approvals. */
const MONEY_ROLES = ["owner", "finance"] as const;
/** Lines of a statement on one page; the CSV has them all. */
const STATEMENT_PAGE_LINES = 100;

type T = (key: Parameters<typeof moneyTexts>[1], params?: Record<string, string | number>) => string;
const textsOf = (who: MerchantSignedIn): T => (key, params) => moneyTexts(who.lang, key, params);

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
<td>${samePerson(a.maker, who.user.email) ? html`<p>${t("approvals.own")}</p>` : html`<form method="post" action="${`/merchant/money/approvals/${a.id}/approve`}" class="inline">${merchantCsrfField(who)}<button type="submit">${t("approvals.approve")}</button></form>`}
<form method="post" action="${`/merchant/money/approvals/${a.id}/reject`}">${merchantCsrfField(who)}<label for="${`reject-${a.id}`}">${t("approvals.reason")}</label><input id="${`reject-${a.id}`}" name="reason" maxlength="500"><button type="submit">${t("approvals.reject")}</button></form></td></tr>`,
            )}</tbody></table>`,
          )
      : approvals;
  return html`<section aria-labelledby="approvals"><h2 id="approvals" tabindex="-1">${t("approvals.title")}</h2><p class="hint">${t("approvals.intro")}</p>${banner}${list}</section>`;
}

function thresholdSection(who: MerchantSignedIn, t: T, merchant: Merchant | undefined, state: { value?: string; error?: string; banner?: SafeHtml | null }): SafeHtml | null {
  if (!merchant) return null;
  const threshold = merchant.withdrawalApprovalThreshold;
  const current = html`<p>${threshold === undefined ? t("threshold.none") : t("threshold.current", { amount: formatMoney(threshold, "TRY", who.lang) })}</p>`;
  const form =
    who.user.role === "owner"
      ? html`<form method="post" action="/merchant/money/threshold" class="card">${merchantCsrfField(who)}
${field({ id: "threshold-amount", name: "threshold", label: t("threshold.amount"), inputmode: "decimal", value: state.value ?? (threshold === undefined ? "" : formatMajorPlain(threshold, who.lang)), hint: t("threshold.hint"), error: state.error })}
<button type="submit">${t("threshold.submit")}</button></form>`
      : null;
  return html`<section aria-labelledby="h-threshold"><h2 id="h-threshold">${t("threshold.title")}</h2>${state.banner ?? null}${current}${form}</section>`;
}


function balancesTable(t: T, lang: Language, balances: readonly Balance[]): SafeHtml | null {
  if (balances.length === 0) return null;
  return tableScroll(
    t("balance.caption"),
    html`<table><caption>${t("balance.caption")}</caption><thead><tr><th scope="col">${t("balance.currency")}</th><th scope="col" class="num">${t("balance.available")}</th><th scope="col" class="num">${t("balance.held")}</th></tr></thead>
<tbody>${balances.map((b) => html`<tr><td>${b.currency}</td><td class="num">${formatMoney(b.available, b.currency, lang)}</td><td class="num">${formatMoney(b.held, b.currency, lang)}</td></tr>`)}</tbody></table>`,
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

export interface MoneyState {
  withdraw?: WithdrawState;
  threshold?: { value?: string; error?: string; banner?: SafeHtml | null };
  approvalsBanner?: SafeHtml | null;
}

/** The banner after an approval decision (`decided`, `outcome` in the query). */
function decidedBanner(t: T, query: Record<string, unknown>): SafeHtml | null {
  const decided = typeof query.decided === "string" && ID_PATTERN.test(query.decided) ? query.decided : "";
  if (!decided) return null;
  const outcome = typeof query.outcome === "string" && /^[A-Za-z_]{1,60}$/.test(query.outcome) ? query.outcome : "";
  return notice(outcome ? t("approvals.approved", { id: decided, outcome }) : t("approvals.rejected", { id: decided }));
}

/** What the page asks when the mode shows the account's money: balances, the statement's page (with its lines' details), the approvals. */
async function moneyOfAccount(who: MerchantSignedIn, period: { startMs: number; endMs: number; from: string; to: string } | undefined, cursor: string) {
  const merchantId = who.user.merchantId;
  const payouts = who.client(PayoutService);
  const [balances, statement, approvals, apiWaiting] = await Promise.all([
    orAlert(who, async () => (await payouts.getBalances({ merchantId })).balances),
    period
      ? orAlert(who, async (): Promise<StatementPage> => {
          const res = await payouts.getStatement({ merchantId, currency: "", fromMs: BigInt(period.startMs), toMs: BigInt(period.endMs), limit: STATEMENT_PAGE_LINES, cursor });
          return { ...statementOf(res, period), details: await statementDetails(who, res.currency, res.lines), next: res.nextCursor, cursor };
        })
      : Promise.resolve(undefined),
    orAlert(who, async () => (await who.client(ApprovalService, "payout").listApprovals({ status: ApprovalStatus.PENDING, limit: 50 })).approvals),
    orAlert(who, () => waitingApiWithdrawals(who)),
  ]);
  return { balances, statement, approvals, apiWaiting };
}

/**
 * The Money page (`/merchant/money`, owner and finance): balances, the statement of a period
 * (the API's numbers: @payments/records' statement, over Türkiye's days), a withdrawal to a TR
 * IBAN (reviewed, then confirmed: withdraw.ts), the approvals that wait, and the threshold (the
 * owner sets it). The account's money is live or sandbox as the merchant is, so it is shown only
 * in that mode; the other mode says where it is. The services scope every call to the user's
 * merchant and decide who may; the page only offers.
 */
export function merchantMoneyPages(deps: ConsoleContext): ConsoleRoute[] {
  const show = async (ctx: ConsoleContextKoa, who: MerchantSignedIn, state: MoneyState, status = 200) => {
    const t = textsOf(who);
    const ask = statementAsk(ctx.query, deps.clock.now(), t);
    const period = "field" in ask.period ? undefined : ask.period;
    const merchant = await orAlert(who, async () => (await who.client(MerchantService).getMerchant({ merchantId: who.user.merchantId })).merchant);
    if (!period && status === 200) status = 400;
    let body: SafeHtml;
    if (isHtml(merchant) || !merchant) {
      body = html`${merchant ?? null}`;
    } else if (ctx.state.mode !== modeOfAccount(merchant.sandbox)) {
      body = html`${state.withdraw?.message ?? null}${otherModeNotice(who, merchant.sandbox)}${thresholdSection(who, t, merchant, state.threshold ?? {})}`;
    } else {
      const { balances, statement, approvals, apiWaiting } = await moneyOfAccount(who, period, cursorParam(ctx.query.cursor));
      const withdrawState: WithdrawState = state.withdraw ?? { message: withdrawBanner(who, ctx.query, merchant.sandbox) };
      const approvalsBanner = state.approvalsBanner ?? decidedBanner(t, ctx.query);
      const created = withdrawState.message !== null && withdrawState.message !== undefined;
      if (!created && ctx.query.threshold === "saved" && !state.threshold) state = { ...state, threshold: { banner: notice(t("threshold.saved")) } };
      body = html`${isHtml(balances) ? balances : balancesTable(t, who.lang, balances)}
${statementSection(who, t, ask, statement === undefined ? undefined : isHtml(statement) ? { error: statement } : statement)}
${withdrawSection(who, merchant.sandbox, withdrawState)}
${approvalsSection(who, t, approvals, approvalsBanner)}
${apiApprovalsSection(who, apiWaiting, ctx.query)}
${thresholdSection(who, t, merchant, state.threshold ?? {})}`;
    }
    merchantPage(ctx, who, { title: t("title"), active: "money", body }, status);
  };

  return [
    merchantRoute(deps, { method: "GET", path: "/merchant/money", roles: MONEY_ROLES }, async (ctx, who) => show(ctx, who, {})),
    merchantRoute(deps, { method: "GET", path: "/merchant/statement.csv", roles: MONEY_ROLES }, async (ctx, who) => {
      const ask = statementAsk(ctx.query, deps.clock.now(), textsOf(who));
      if ("field" in ask.period) return show(ctx, who, {}, 400);
      let merchant: Merchant | undefined;
      try {
        merchant = (await who.client(MerchantService).getMerchant({ merchantId: who.user.merchantId })).merchant;
      } catch (err) {
        return merchantRefusal(ctx, who, err, { title: textsOf(who)("statement.title"), active: "money" });
      }
      // Another mode than the account's money: the page that says where it is, no file.
      if (!merchant || ctx.state.mode !== modeOfAccount(merchant.sandbox)) return show(ctx, who, {}, 409);
      return statementCsv(ctx, who, ask.period);
    }),
    ...withdrawRoutes(deps, MONEY_ROLES, show),
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
