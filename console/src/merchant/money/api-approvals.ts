import { PayoutService, type Withdrawal } from "@payments/contracts/payout";
import type { ConsoleContext } from "../../context.js";
import { html, SafeHtml } from "../../shared/html.js";
import { notice } from "../../shared/layout.js";
import { formatMoney } from "../../shared/format.js";
import { ID_PATTERN, linkTo, seeOther, timeOf } from "../../shared/params.js";
import type { ConsoleRoute } from "../../route.js";
import { merchantCsrfField, merchantNotFound, merchantRefusal, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { moneyTexts } from "./texts.js";

/**
 * The Money page's API withdrawals that wait for the merchant's own four-eyes (issue 32): an API
 * key not trusted for automatic payouts asked for more than the threshold, so the withdrawal exists,
 * pending with its amount held, but the payout service sends nothing until an owner or finance
 * user approves it here (PayoutService.approveWithdrawal) or rejects it (rejectWithdrawal:
 * cancelled, the amount released). The service decides who may and scopes every call to the
 * user's merchant; the page only offers.
 */

/** Who decides: the same people as the Money page's other approvals. */
const DECIDERS = ["owner", "finance"] as const;
/** How many waiting withdrawals the page lists (the newest; a merchant with more decides these first). */
export const API_APPROVALS_SHOWN = 50;

type T = (key: Parameters<typeof moneyTexts>[1], params?: Record<string, string | number>) => string;

/** Kuruş as Türkiye and the English page write money: ₺22.574,50 and TRY 22,574.50 (shared/format.ts). */
export function moneyIn(lang: MerchantSignedIn["lang"], kurus: bigint, currency: string): string {
  return formatMoney(kurus, currency, lang);
}

/** The waiting withdrawals for the page (a refusal is shown in the section's place). */
export async function waitingApiWithdrawals(who: MerchantSignedIn): Promise<Withdrawal[]> {
  return (await who.client(PayoutService).listWithdrawalApprovals({ merchantId: who.user.merchantId, limit: API_APPROVALS_SHOWN })).withdrawals;
}

function decisionForms(who: MerchantSignedIn, t: T, w: Withdrawal): SafeHtml {
  const base = `/merchant/money/api-withdrawals/${w.id}`;
  return html`<form method="post" action="${`${base}/approve`}" class="inline">${merchantCsrfField(who)}<button type="submit">${t("api.approve")}</button></form>
<form method="post" action="${`${base}/reject`}">${merchantCsrfField(who)}<label for="${`api-reject-${w.id}`}">${t("api.reason")}</label><input id="${`api-reject-${w.id}`}" name="reason" maxlength="500"><button type="submit">${t("api.reject")}</button></form>`;
}

/** The line after a decision, from the redirect's query (`apiDecided`, `apiOutcome`). */
function decisionBanner(t: T, query: Record<string, unknown>): SafeHtml | null {
  const id = typeof query.apiDecided === "string" && ID_PATTERN.test(query.apiDecided) ? query.apiDecided : "";
  if (!id) return null;
  if (query.apiOutcome === "approved") return notice(t("api.approved", { id }));
  if (query.apiOutcome === "rejected") return notice(t("api.rejected", { id }));
  return null;
}

/** The section: what waits, names and amounts first, each with approve and reject. */
export function apiApprovalsSection(who: MerchantSignedIn, waiting: readonly Withdrawal[] | SafeHtml, query: Record<string, unknown>): SafeHtml {
  const t: T = (key, params) => moneyTexts(who.lang, key, params);
  let list: SafeHtml;
  if (waiting instanceof SafeHtml) list = waiting;
  else if (waiting.length === 0) list = html`<p>${t("api.empty")}</p>`;
  else {
    list = tableScroll(
      t("api.caption"),
      html`<table><caption>${t("api.caption")}</caption>
<thead><tr><th scope="col">${t("api.holder")}</th><th scope="col" class="num">${t("api.amount")}</th><th scope="col">${t("api.key")}</th><th scope="col">${t("api.asked")}</th><th scope="col">${t("api.expires")}</th><th scope="col">${t("api.withdrawal")}</th><th scope="col">${t("api.decide")}</th></tr></thead>
<tbody>${waiting.map(
        (w) => html`<tr><td>${w.accountName}<br><small>${w.iban}</small></td><td class="num">${moneyIn(who.lang, w.amount, w.currency)}</td><td><code>${w.apiKeyId}</code></td><td>${timeOf(w.createdAt, who.lang)}</td><td>${timeOf(w.approval?.expiresAt, who.lang)}</td>
<td><a href="${`/merchant/withdrawals/${w.id}`}">${w.processId}</a></td><td>${decisionForms(who, t, w)}</td></tr>`,
      )}</tbody></table>`,
    );
  }
  return html`<section aria-labelledby="api-approvals"><h2 id="api-approvals" tabindex="-1">${t("api.title")}</h2><p class="hint">${t("api.intro")}</p>${decisionBanner(t, query)}${list}</section>`;
}

/** POST /merchant/money/api-withdrawals/:id/approve|reject: the decision, then back to the section. */
export function apiApprovalRoutes(deps: ConsoleContext): ConsoleRoute[] {
  return [
    merchantRoute(deps, { method: "POST", path: "/merchant/money/api-withdrawals/:id/:decision", roles: DECIDERS }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      const decision = ctx.params.decision;
      if (!ID_PATTERN.test(id) || (decision !== "approve" && decision !== "reject")) return merchantNotFound(ctx, who, "money");
      const payouts = who.client(PayoutService);
      const merchantId = who.user.merchantId;
      try {
        if (decision === "approve") await payouts.approveWithdrawal({ merchantId, withdrawalId: id });
        else await payouts.rejectWithdrawal({ merchantId, withdrawalId: id, reason: String(ctx.state.form?.reason ?? "").trim().slice(0, 500) });
      } catch (err) {
        return merchantRefusal(ctx, who, err, { title: moneyTexts(who.lang, "api.title"), active: "money" });
      }
      return seeOther(ctx, `${linkTo("/merchant/money", { apiDecided: id, apiOutcome: decision === "approve" ? "approved" : "rejected" })}#api-approvals`);
    }),
  ];
}
