import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { BankCatalogService, type Bank } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { errorInfo, normalizeIban, turkishIbanBankCode, turkishIbanProblem } from "@payments/kit";
import { createWithdrawalBody, createWithdrawalRequest, type CreateWithdrawalBody } from "@payments/records";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import { ID_PATTERN, linkTo, minorUnits, seeOther } from "../../shared/params.js";
import type { ConsoleRoute } from "../../route.js";
import { formatMajorPlain, formatMoney } from "../../shared/format.js";
import type { Mode } from "../../shared/mode.js";
import type { ConsoleContextKoa } from "../../state.js";
import { merchantCsrfField, merchantPage, merchantRefusal, merchantRoute, type MerchantSignedIn } from "../merchant-call.js";
import { moneyTexts } from "./texts.js";
import { withdrawTexts } from "./withdraw-texts.js";

/**
 * The Money page's withdrawal in two steps. The form takes the amount (typed the Turkish or the
 * English way), the IBAN and the holder; the bank is read from the IBAN (its five digits after
 * the check digits are the bank's EFT code, matched against the bank catalog's banks). A review
 * shows what would be sent and carries it in hidden fields; only its confirmation creates the
 * withdrawal, after every value is judged again (nothing hidden is trusted: the bank is derived
 * again from the IBAN). The processId is `dashboard-<form token>`, so a double confirmation is
 * one withdrawal. The account's money is live or sandbox as the merchant is; a withdrawal is
 * made only in the mode that shows that money, and a sandbox one says so at every step.
 */

/** A withdrawal form's one-time token: the processId's random part, so a double submit is the same withdrawal. */
export const FORM_TOKEN = /^[A-Za-z0-9_-]{22}$/;
const PROCESS_ID_PREFIX = "dashboard-";
const HOLDER_MAX = 200;

type MT = (key: Parameters<typeof moneyTexts>[1], params?: Record<string, string | number>) => string;
type WT = (key: Parameters<typeof withdrawTexts>[1], params?: Record<string, string | number>) => string;
const wt =
  (who: MerchantSignedIn): WT =>
  (key, params) =>
    withdrawTexts(who.lang, key, params);
const mt =
  (who: MerchantSignedIn): MT =>
  (key, params) =>
    moneyTexts(who.lang, key, params);

export interface WithdrawState {
  form?: Record<string, string>;
  errors?: Record<string, string>;
  message?: SafeHtml | null;
}

/** What the Money page passes back to itself: the withdrawal's part of its state. */
export type ShowMoney = (ctx: ConsoleContextKoa, who: MerchantSignedIn, state: { withdraw?: WithdrawState }, status?: number) => Promise<void>;

/** The mode that shows an account's money: its own kind. */
export function modeOfAccount(sandbox: boolean): Mode {
  return sandbox ? "sandbox" : "live";
}

/** An IBAN in groups of four, as it is printed on a card or a statement: `TR33 0006 1005 …`. */
export function groupIban(iban: string): string {
  return iban.replace(/(.{4})(?=.)/g, "$1 ");
}

/** The bank whose EFT code a Turkish IBAN carries (an active one first), or undefined when the catalog has none. */
export function bankOfIban(iban: string, banks: readonly Bank[]): Bank | undefined {
  const code = turkishIbanBankCode(iban);
  const matching = banks.filter((b) => /^\d{1,5}$/.test(b.code) && b.code.padStart(5, "0") === code);
  return matching.find((b) => b.active) ?? matching[0];
}

/** The form (first step): amount, IBAN, holder; the account's kind said above it. */
export function withdrawSection(who: MerchantSignedIn, sandbox: boolean, state: WithdrawState): SafeHtml {
  const t = mt(who);
  const w = wt(who);
  const form = state.form ?? {};
  const err = (name: string) => state.errors?.[name];
  const token = FORM_TOKEN.test(form.formToken ?? "") ? form.formToken! : randomBytes(16).toString("base64url");
  return html`<section aria-labelledby="h-withdraw"><h2 id="h-withdraw">${t("withdraw.title")}</h2>
<p class="hint">${w("form.intro")}</p><p class="${sandbox ? "sandbox-note" : "live-note"}"><strong>${sandbox ? w("form.sandbox") : w("form.live")}</strong></p>${state.message ?? null}
<form method="post" action="/merchant/money/withdrawals" class="card">${merchantCsrfField(who)}<input type="hidden" name="formToken" value="${token}"><input type="hidden" name="step" value="review">
${field({ id: "withdraw-amount", name: "amount", label: t("withdraw.amount"), inputmode: "decimal", required: true, value: form.amount ?? "", hint: w("form.amountHint"), error: err("amount") })}
${field({ id: "withdraw-iban", name: "iban", label: t("withdraw.iban"), required: true, value: form.iban ?? "", autocomplete: "off", hint: w("form.ibanHint"), error: err("iban") })}
${field({ id: "withdraw-holder", name: "accountName", label: t("withdraw.holder"), required: true, value: form.accountName ?? "", error: err("accountName") })}
<button type="submit">${w("form.next")}</button></form></section>`;
}

/** The banner after a withdrawal was created (`?created=`): a sandbox one says no real money moves. */
export function createdBanner(who: MerchantSignedIn, id: string, sandbox: boolean): SafeHtml {
  const text = sandbox ? wt(who)("created.sandbox", { id }) : mt(who)("withdraw.created", { id });
  return html`<div class="notice" role="status">${text} <a href="${`/merchant/withdrawals/${id}`}">${mt(who)("withdraw.open")}</a></div>`;
}

/** In a mode that does not show the account's money: what the page shows instead, with the way to the other mode. */
export function otherModeNotice(who: MerchantSignedIn, sandbox: boolean): SafeHtml {
  const w = wt(who);
  const mode = modeOfAccount(sandbox);
  return html`<div class="notice" role="status"><p>${sandbox ? w("mode.accountSandbox") : w("mode.accountLive")}</p><p><a href="${`/merchant/money?mode=${mode}`}">${sandbox ? w("mode.showSandbox") : w("mode.showLive")}</a></p></div>`;
}

interface Draft {
  amount: bigint;
  iban: string;
  accountName: string;
  bank: Bank | undefined;
  body: CreateWithdrawalBody;
}

/** Every value judged, in the page's language; the bank derived from the IBAN. */
function judge(who: MerchantSignedIn, token: string, input: { amount: bigint | undefined; iban: string; accountName: string }, banks: readonly Bank[]): { draft: Draft } | { errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const { amount } = input;
  if (amount === undefined || amount <= 0n || amount > BigInt(Number.MAX_SAFE_INTEGER)) errors.amount = mt(who)("withdraw.badAmount");
  const iban = normalizeIban(input.iban);
  const problem = turkishIbanProblem(iban);
  if (problem) errors.iban = wt(who)(`iban.${problem}`);
  const bank = problem ? undefined : bankOfIban(iban, banks);
  const parsed = createWithdrawalBody.safeParse({
    processId: `${PROCESS_ID_PREFIX}${token}`,
    amount: errors.amount ? 1 : Number(amount),
    bankId: bank?.id,
    accountName: input.accountName,
    iban,
    userId: who.user.id,
    userName: who.user.email,
    name: who.user.displayName || who.user.email,
  });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path.map(String).join(".");
      if (name in errors) continue;
      if (name === "accountName") errors.accountName = issue.message === "is required" ? wt(who)("holder.required") : issue.message.startsWith("must be at most") ? wt(who)("holder.tooLong", { max: HOLDER_MAX }) : wt(who)("holder.unsafe");
      else if (name !== "iban" && name !== "amount") errors[name] = `${name}: ${issue.message}`;
    }
  }
  if (Object.keys(errors).length > 0 || !parsed.success) return { errors };
  return { draft: { amount: amount!, iban, accountName: parsed.data.accountName, bank, body: parsed.data } };
}

/** The review step: what would be sent, each value in hidden fields for the confirmation (judged again there). */
function reviewPage(ctx: ConsoleContextKoa, who: MerchantSignedIn, token: string, d: Draft, sandbox: boolean): void {
  const w = wt(who);
  const bankName = d.bank ? d.bank.name : w("review.unknownBank", { code: turkishIbanBankCode(d.iban) });
  const body = html`<section aria-labelledby="h-review"><h2 id="h-review">${w("review.title")}</h2><p>${w("review.intro")}</p>
<dl class="facts card">
<dt>${w("review.amount")}</dt><dd>${formatMoney(d.amount, "TRY", who.lang)}</dd>
<dt>${w("review.iban")}</dt><dd><code>${groupIban(d.iban)}</code></dd>
<dt>${w("review.holder")}</dt><dd>${d.accountName}</dd>
<dt>${w("review.bank")}</dt><dd>${bankName}</dd>
<dt>${w("review.money")}</dt><dd><strong>${sandbox ? w("review.sandbox") : w("review.live")}</strong></dd>
</dl>
<form method="post" action="/merchant/money/withdrawals">${merchantCsrfField(who)}<input type="hidden" name="formToken" value="${token}">
<input type="hidden" name="amountMinor" value="${String(d.amount)}"><input type="hidden" name="iban" value="${d.iban}"><input type="hidden" name="accountName" value="${d.accountName}">
<button type="submit" name="step" value="confirm">${w("review.confirm")}</button> <button type="submit" name="step" value="edit" class="secondary">${w("review.edit")}</button></form></section>`;
  merchantPage(ctx, who, { title: w("review.title"), active: "money", body });
}

/** The confirmation's amount: kuruş digits only, as the review wrote them. */
function confirmedAmount(value: string | undefined): bigint | undefined {
  return typeof value === "string" && /^[1-9]\d{0,15}$/.test(value) ? BigInt(value) : undefined;
}

/** CreateWithdrawal for a judged draft: created, waiting for approval, or the same form again (one withdrawal). */
async function create(ctx: ConsoleContextKoa, who: MerchantSignedIn, show: ShowMoney, form: Record<string, string>, d: Draft): Promise<void> {
  try {
    const res = await who.client(PayoutService).createWithdrawal(createWithdrawalRequest(who.user.merchantId, d.body));
    return seeOther(ctx, `${linkTo("/merchant/money", { created: res.withdrawal?.id })}#h-withdraw`);
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    const info = errorInfo(err);
    const approvalId = info.details?.approvalId;
    if (info.reason === "APPROVAL_REQUIRED" && approvalId && ID_PATTERN.test(approvalId)) return seeOther(ctx, `${linkTo("/merchant/money", { approval: approvalId })}#approvals`);
    const existing = info.details?.transactionId;
    // The same form confirmed twice: the same processId, so the withdrawal made the first time.
    if (info.reason === "DUPLICATE_TRANSACTION" && existing && ID_PATTERN.test(existing)) return seeOther(ctx, `${linkTo("/merchant/money", { created: existing })}#h-withdraw`);
    if (info.code === Code.InvalidArgument || info.code === Code.FailedPrecondition || info.code === Code.OutOfRange) {
      const where = info.field === "iban" ? "iban" : info.field === "account_name" ? "accountName" : info.field === "amount" ? "amount" : "";
      const message = refusalText(who, err);
      const refill = { formToken: form.formToken ?? "", amount: formatMajorPlain(d.amount, who.lang), iban: groupIban(d.iban), accountName: d.accountName };
      return show(ctx, who, { withdraw: { form: refill, ...(where ? { errors: { [where]: message } } : {}), message: alert(message) } }, info.code === Code.InvalidArgument ? 400 : 409);
    }
    return merchantRefusal(ctx, who, err, { title: mt(who)("withdraw.title"), active: "money" });
  }
}

/** A service's refusal in words, for a message inside the page. */
export function refusalText(who: MerchantSignedIn, err: ConnectError): string {
  const info = errorInfo(err);
  return who.lang === "tr" ? `Servis reddetti (${info.reason ?? Code[info.code]}): ${info.message}` : `The service refused (${info.reason ?? Code[info.code]}): ${info.message}`;
}

/** The account's kind and the bank catalog's banks, or the refusal already answered (undefined). */
async function accountAndBanks(ctx: ConsoleContextKoa, who: MerchantSignedIn): Promise<{ sandbox: boolean; banks: Bank[] } | undefined> {
  try {
    const [merchant, banks] = await Promise.all([
      who.client(MerchantService).getMerchant({ merchantId: who.user.merchantId }),
      who.client(BankCatalogService).listBanks({}),
    ]);
    return { sandbox: merchant.merchant?.sandbox ?? false, banks: banks.banks };
  } catch (err) {
    merchantRefusal(ctx, who, err, { title: mt(who)("withdraw.title"), active: "money" });
    return undefined;
  }
}

/**
 * POST /merchant/money/withdrawals, one route for the three steps (`step`): review (the form's,
 * and anything else: nothing is created), edit (back to the form, filled), confirm (created).
 */
export function withdrawRoutes(deps: ConsoleContext, roles: readonly ("owner" | "finance")[], show: ShowMoney): ConsoleRoute[] {
  return [
    merchantRoute(deps, { method: "POST", path: "/merchant/money/withdrawals", roles }, async (ctx, who) => {
      const form = ctx.state.form ?? {};
      const step = form.step === "confirm" ? "confirm" : form.step === "edit" ? "edit" : "review";
      const token = form.formToken ?? "";
      if (!FORM_TOKEN.test(token)) return show(ctx, who, { withdraw: { form: { ...form, formToken: "" }, message: alert(mt(who)("withdraw.badToken")) } }, 400);
      const account = await accountAndBanks(ctx, who);
      if (!account) return;
      const kind = modeOfAccount(account.sandbox);
      if (ctx.state.mode !== kind) {
        const message = wt(who)("mode.refused", { shown: wt(who)(`mode.${ctx.state.mode}`), kind: wt(who)(`mode.${kind}`) });
        return show(ctx, who, { withdraw: { message: alert(message) } }, 409);
      }
      const amount = step === "review" ? minorUnits(form.amount ?? "", who.lang) : confirmedAmount(form.amountMinor);
      const input = { amount, iban: form.iban ?? "", accountName: form.accountName ?? "" };
      const judged = judge(who, token, input, account.banks);
      if ("errors" in judged) {
        const typed = step === "review" ? (form.amount ?? "") : amount === undefined ? "" : formatMajorPlain(amount, who.lang);
        const refill = { formToken: token, amount: typed, iban: input.iban, accountName: input.accountName };
        const message = step === "review" ? null : alert(wt(who)("review.tampered"));
        return show(ctx, who, { withdraw: { form: refill, errors: judged.errors, message } }, 400);
      }
      const d = judged.draft;
      if (step === "edit") return show(ctx, who, { withdraw: { form: { formToken: token, amount: formatMajorPlain(d.amount, who.lang), iban: groupIban(d.iban), accountName: d.accountName } } });
      if (step === "review") return reviewPage(ctx, who, token, d, account.sandbox);
      return create(ctx, who, show, form, d);
    }),
  ];
}

/** The line after a withdrawal (`created`, `approval` in the query), or none. */
export function withdrawBanner(who: MerchantSignedIn, query: Record<string, unknown>, sandbox: boolean): SafeHtml | null {
  const created = typeof query.created === "string" && ID_PATTERN.test(query.created) ? query.created : "";
  const waits = typeof query.approval === "string" && ID_PATTERN.test(query.approval) ? query.approval : "";
  if (created) return createdBanner(who, created, sandbox);
  if (waits) return notice(mt(who)("withdraw.waits", { id: waits }));
  return null;
}
