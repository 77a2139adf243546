import { PayoutService, WithheldCreditStatus, type WithheldCredit } from "@payments/contracts/payout";
import { WITHHELD_CREDIT_STATUSES, withheldCreditStatusFromProto, withheldCreditStatusToProto } from "@payments/contracts/statuses";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { csrfField, cursorParam, ID_PATTERN, isOneOf, linkTo, money, notFoundPage, operatorRoute, pager, queryText, type Refusal, refusalAlert, refusalOf, scrollingTable, seeOther, type SignedIn, timeOf, waitingForApproval, workPage } from "../operator-call.js";
import { actorNamed, merchantNamed, Names } from "../directory.js";
import { withheldTexts, type WithheldTextKey } from "./texts.js";

const PAGE_SIZE = 50;
/** ListWithheldCredits' largest page, and how many a merchant's one is looked for in (there is no RPC for one by id). */
const FIND_PAGE = 100;
const FIND_PAGES = 20;

const FILTERS = [...WITHHELD_CREDIT_STATUSES, "all"] as const;
type Filter = (typeof FILTERS)[number];
const DECISIONS = ["credit", "dismiss"] as const;
type Decision = (typeof DECISIONS)[number];

type T = (key: WithheldTextKey, params?: Record<string, string | number>) => string;
const textsOf = (who: SignedIn): T => (key, params) => withheldTexts(who.lang, key, params);
const statusText = (t: T, c: WithheldCredit) => t(`status.${withheldCreditStatusFromProto(c.status) ?? "unknown"}`);
const detailPath = (c: { merchantId: string; id: string }) => `/withheld-credits/${c.merchantId}/${c.id}`;

function filterForm(t: T, chosen: Filter, merchant: string, merchantError: string | undefined): SafeHtml {
  const label = (f: Filter) => (f === "all" ? t("filter.all") : t(`status.${f}`));
  return html`<form method="get" action="/withheld-credits" class="filters"><div><label for="filter-status">${t("filter.status")}</label>
<select id="filter-status" name="status">${FILTERS.map((f) => html`<option value="${f}"${f === chosen ? html` selected` : null}>${label(f)}</option>`)}</select></div>
<div>${field({ id: "filter-merchant", name: "merchant", label: t("filter.merchant"), value: merchant, error: merchantError })}</div>
<button type="submit">${t("filter.show")}</button></form>`;
}

function listTable(who: SignedIn, t: T, credits: WithheldCredit[], names: Names): SafeHtml {
  if (credits.length === 0) return html`<p>${t("empty")}</p>`;
  return scrollingTable(
    t("caption"),
    html`<table><caption>${t("caption")}</caption>
<thead><tr><th scope="col">${t("merchant")}</th><th scope="col" class="num">${t("amount")}</th><th scope="col">${t("status")}</th><th scope="col">${t("why")}</th><th scope="col">${t("withheldAt")}</th><th scope="col">${t("decision")}</th><th scope="col">${t("deposit")}</th><th scope="col">${t("id")}</th></tr></thead>
<tbody>${credits.map(
      (c) => html`<tr><th scope="row">${merchantNamed(names, c.merchantId)}</th><td class="num">${money(c.amount, c.currency, who.lang)}</td><td>${statusText(t, c)}</td><td>${c.reason || "—"}</td><td>${timeOf(c.createdAt, who.lang)}</td><td>${c.status === WithheldCreditStatus.OPEN ? "—" : html`${actorNamed(names, c.resolvedBy)}: ${c.resolution || "—"}`}</td><td><a href="${`/deposits/${c.depositId}`}">${c.processId || c.depositId}</a></td><td><a href="${detailPath(c)}">${c.id}</a></td></tr>`,
    )}</tbody></table>`,
  );
}

interface ResolveState {
  form?: Record<string, string>;
  refusal?: Refusal;
}

function resolveForm(who: SignedIn, t: T, c: WithheldCredit, state: ResolveState): SafeHtml | null {
  if (c.status !== WithheldCreditStatus.OPEN) return null;
  if (!roleAtLeast(who.operator.role, "finance")) return html`<p class="hint">${t("resolve.onlyFinance")}</p>`;
  const err = (...names: string[]) => (state.refusal?.field && names.includes(state.refusal.field) ? state.refusal.message : undefined);
  const chosen = state.form?.decision;
  const decisionError = err("decision");
  const radio = (d: Decision) =>
    html`<div><input type="radio" id="${`decision-${d}`}" name="decision" value="${d}"${chosen === d ? html` checked` : null}> <label class="inline-label" for="${`decision-${d}`}">${t(d === "credit" ? "resolve.credit" : "resolve.dismiss")}</label></div>`;
  return html`<form method="post" action="${`${detailPath(c)}/resolve`}" class="card" aria-labelledby="h-resolve"><h2 id="h-resolve">${t("resolve.title")}</h2>${csrfField(who)}
<fieldset${decisionError ? html` aria-describedby="decision-error"` : null}><legend>${t("resolve.decision")}</legend>${radio("credit")}${radio("dismiss")}
${decisionError ? html`<p class="error" id="decision-error">${decisionError}</p>` : null}</fieldset>
${field({ id: "resolve-reason", name: "reason", label: t("resolve.reason"), required: true, value: state.form?.reason ?? "", hint: t("resolve.reasonHint"), error: err("reason") })}
<button type="submit">${t("resolve.submit")}</button></form>`;
}

function facts(who: SignedIn, t: T, c: WithheldCredit, names: Names): SafeHtml {
  const open = c.status === WithheldCreditStatus.OPEN;
  return html`<dl class="facts card">
<dt>${t("merchant")}</dt><dd>${merchantNamed(names, c.merchantId)}</dd>
<dt>${t("amount")}</dt><dd>${money(c.amount, c.currency, who.lang)}</dd>
<dt>${t("status")}</dt><dd>${statusText(t, c)}</dd>
<dt>${t("deposit")}</dt><dd><a href="${`/deposits/${c.depositId}`}">${c.depositId}</a></dd>
<dt>${t("processId")}</dt><dd>${c.processId || "—"}</dd>
<dt>${t("why")}</dt><dd>${c.reason || "—"}</dd>
<dt>${t("withheldAt")}</dt><dd>${timeOf(c.createdAt, who.lang)}</dd>
${open ? null : html`<dt>${t("decidedBy")}</dt><dd>${actorNamed(names, c.resolvedBy)}</dd><dt>${t("decidedWhy")}</dt><dd>${c.resolution || "—"}</dd><dt>${t("decidedAt")}</dt><dd>${timeOf(c.resolvedAt, who.lang) ?? "—"}</dd>`}
<dt>${t("inBalance")}</dt><dd>${t(open ? "inBalance.open" : c.status === WithheldCreditStatus.CREDITED ? "inBalance.credited" : "inBalance.dismissed")}</dd>
</dl>`;
}

/** One merchant's withheld credit by id: the payout service lists them (a merchant's are few: a race with its switch to live). */
async function findCredit(who: SignedIn, merchantId: string, id: string): Promise<WithheldCredit | undefined> {
  let cursor = "";
  for (let i = 0; i < FIND_PAGES; i++) {
    const page = await who.client(PayoutService).listWithheldCredits({ merchantId, limit: FIND_PAGE, cursor });
    const found = page.credits.find((c) => c.id === id);
    if (found || !page.nextCursor) return found;
    cursor = page.nextCursor;
  }
  return undefined;
}

/**
 * Withheld credits (the CLI's `withheld-credit`): the list by status (open first) and merchant,
 * one credit, and finance's decision on an open one: credit it (a live merchant's waits for a
 * second operator: the answer links the approval) or dismiss it, always with a reason.
 */
export function withheldCreditPages(deps: ConsoleContext): ConsoleRoute[] {
  const showDetail = async (ctx: ConsoleContextKoa, who: SignedIn, merchantId: string, id: string, state: ResolveState, banner: SafeHtml | null, status = 200) => {
    const t = textsOf(who);
    const title = t("detail.title", { id });
    const back = html`<p><a href="/withheld-credits">${t("detail.back")}</a></p>`;
    let credit: WithheldCredit | undefined;
    try {
      credit = await findCredit(who, merchantId, id);
    } catch (err) {
      const refusal = refusalOf(err, who.t);
      return workPage(ctx, who, { title, body: html`${refusalAlert(refusal)}${back}` }, refusal.status);
    }
    if (!credit) return workPage(ctx, who, { title, body: html`${alert(t("detail.notFound", { id }))}${back}` }, 404);
    const names = await (await Names.of(deps, who)).ensure({ merchants: [merchantId] });
    const refused = state.refusal ? alert(state.refusal.message) : null;
    workPage(ctx, who, { title, body: html`${banner}${refused}${back}${facts(who, t, credit, names)}${resolveForm(who, t, credit, state)}` }, status);
  };

  return [
    operatorRoute(deps, { method: "GET", path: "/withheld-credits" }, async (ctx, who) => {
      const t = textsOf(who);
      const chosen: Filter = isOneOf(FILTERS, ctx.query.status) ? ctx.query.status : "open";
      const merchant = queryText(ctx.query.merchant, 80);
      const badMerchant = merchant !== "" && !ID_PATTERN.test(merchant);
      const page = (body: SafeHtml, status = 200) =>
        workPage(ctx, who, { title: t("title"), body: html`<p>${t("intro")}</p>${filterForm(t, chosen, merchant, badMerchant ? t("filter.badMerchant") : undefined)}${body}` }, status);
      if (badMerchant) return page(html``, 400);
      const cursor = cursorParam(ctx.query.cursor);
      try {
        const res = await who.client(PayoutService).listWithheldCredits({ merchantId: merchant, status: chosen === "all" ? WithheldCreditStatus.UNSPECIFIED : withheldCreditStatusToProto(chosen), limit: PAGE_SIZE, cursor });
        const names = await (await Names.of(deps, who)).ensure({ merchants: res.credits.map((c) => c.merchantId) });
        page(html`${listTable(who, t, res.credits, names)}${pager(who, "/withheld-credits", { status: chosen, merchant }, cursor, res.nextCursor)}`);
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        page(refusalAlert(refusal), refusal.status);
      }
    }),
    operatorRoute(deps, { method: "GET", path: "/withheld-credits/:merchantId/:id" }, async (ctx, who) => {
      const t = textsOf(who);
      const merchantId = ctx.params.merchantId ?? "";
      const id = ctx.params.id ?? "";
      if (!ID_PATTERN.test(merchantId) || !ID_PATTERN.test(id)) return notFoundPage(ctx, who);
      const approval = cursorParam(ctx.query.approval);
      const done = ctx.query.done;
      const banner = approval ? waitingForApproval(who, "payout", approval) : isOneOf(DECISIONS, done) ? notice(t(done === "credit" ? "done.credit" : "done.dismiss")) : null;
      await showDetail(ctx, who, merchantId, id, {}, banner);
    }),
    operatorRoute(deps, { method: "POST", path: "/withheld-credits/:merchantId/:id/resolve" }, async (ctx, who) => {
      const t = textsOf(who);
      const merchantId = ctx.params.merchantId ?? "";
      const id = ctx.params.id ?? "";
      if (!ID_PATTERN.test(merchantId) || !ID_PATTERN.test(id)) return notFoundPage(ctx, who);
      const form = ctx.state.form ?? {};
      const invalid = (field: string, message: string) => showDetail(ctx, who, merchantId, id, { form, refusal: { status: 400, message, reason: "VALIDATION_ERROR", field, approvalId: undefined } }, null, 400);
      const decision = form.decision;
      const reason = (form.reason ?? "").trim();
      if (!isOneOf(DECISIONS, decision)) return invalid("decision", t("resolve.decisionRequired"));
      if (!reason) return invalid("reason", t("resolve.reasonRequired"));
      const path = `/withheld-credits/${merchantId}/${id}`;
      try {
        await who.client(PayoutService).resolveWithheldCredit({ id, actor: who.operator.email, reason, decision: { case: decision, value: true } });
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        if (refusal.approvalId) return seeOther(ctx, linkTo(path, { approval: refusal.approvalId }));
        return showDetail(ctx, who, merchantId, id, { form, refusal }, null, refusal.status);
      }
      seeOther(ctx, linkTo(path, { done: decision }));
    }),
  ];
}
