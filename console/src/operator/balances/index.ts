import { MerchantService, type Merchant } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import { formatMajorPlain } from "../../shared/format.js";
import type { ConsoleContextKoa } from "../../state.js";
import { cursorParam, linkTo, operatorRoute, refusalAlert, refusalOf, seeOther, waitingForApproval, workPage, type SignedIn } from "../operator-call.js";
import { adjustForm, balancesTable, isAdjustment, ledgerTable, readAdjustment, reviewBody, summary, textsOf, type AdjustForm, type FormState } from "./parts.js";

/** How many of the latest ledger entries the page shows. */
const LEDGER_SHOWN = 20;

const formOf = (ctx: ConsoleContextKoa): AdjustForm => {
  const form = ctx.state.form ?? {};
  return { direction: form.direction, amount: form.amount, currency: form.currency, reason: form.reason };
};

/** The merchant as the merchant service shows this operator, or the page that says why not (already answered). */
async function merchantOr(ctx: ConsoleContextKoa, who: SignedIn, id: string): Promise<Merchant | undefined> {
  const t = textsOf(who);
  const back = html`<p><a href="/merchants">${who.t("merchants.back")}</a></p>`;
  try {
    const merchant = (await who.client(MerchantService).getMerchant({ merchantId: id })).merchant;
    if (merchant) return merchant;
    workPage(ctx, who, { title: t("title", { name: id }), body: html`${alert(who.t("call.notFound", { detail: id }))}${back}` }, 404);
  } catch (err) {
    const refusal = refusalOf(err, who.t);
    workPage(ctx, who, { title: t("title", { name: id }), body: html`${refusalAlert(refusal)}${back}` }, refusal.status);
  }
  return undefined;
}

/** The balance page: the merchant in short, its balances and latest movements (each part says in its place when the service refused it), and the adjustment form. */
async function showBalance(ctx: ConsoleContextKoa, who: SignedIn, id: string, state: FormState, banner: SafeHtml | null, status = 200): Promise<void> {
  const t = textsOf(who);
  const m = await merchantOr(ctx, who, id);
  if (!m) return;
  const payouts = who.client(PayoutService);
  const [balances, ledger] = await Promise.all([
    payouts
      .getBalances({ merchantId: id })
      .then((res) => balancesTable(who, t, res.balances))
      .catch((err: unknown) => refusalAlert(refusalOf(err, who.t))),
    payouts
      .listLedgerEntries({ merchantId: id, limit: LEDGER_SHOWN })
      .then((res) => ledgerTable(who, t, res.entries, LEDGER_SHOWN))
      .catch((err: unknown) => refusalAlert(refusalOf(err, who.t))),
  ]);
  const problems = Object.values(state.errors ?? {});
  workPage(
    ctx,
    who,
    {
      title: t("title", { name: m.name }),
      body: html`${banner}${state.refusal ? alert(state.refusal.message) : null}${problems.length > 0 ? alert(t("form.check", { problems: problems.join(" ") })) : null}
<p><a href="${`/merchants/${m.id}`}">${t("back")}</a></p>
${summary(who, t, m)}
<h2>${t("balances.caption")}</h2>${balances}
<h2>${t("ledger.caption")}</h2>${ledger}
${adjustForm(who, t, m.id, state)}`,
    },
    status,
  );
}

/** A route of this page: the merchant id checked against the ids' alphabet before anything is asked. */
function route(deps: ConsoleContext, method: "GET" | "POST", path: string, handle: (ctx: ConsoleContextKoa, who: SignedIn, id: string) => Promise<void>): ConsoleRoute {
  return operatorRoute(deps, { method, path, ids: ["id"] }, async (ctx, who, { id }) => {
    await handle(ctx, who, id);
  });
}

/**
 * A merchant's money for operators (the CLI's `balance show|ledger|adjust`): its balances per
 * currency, its latest ledger movements, and a manual adjustment of its available balance, typed
 * (a positive amount and its way, a reason), reviewed, then sent; a live merchant's waits for a
 * second operator (the answer links the approval). The payout service decides who may.
 */
export function balancePages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    route(deps, "GET", "/merchants/:id/balance", async (ctx, who, id) => {
      const t = textsOf(who);
      const approval = cursorParam(ctx.query.approval);
      const entry = cursorParam(ctx.query.entry);
      const banner = approval ? waitingForApproval(who, "payout", approval) : ctx.query.done === "posted" ? notice(t("done.posted", { entry })) : null;
      await showBalance(ctx, who, id, {}, banner);
    }),
    // The review's "change": the form again with what was typed; nothing is sent.
    route(deps, "POST", "/merchants/:id/balance/edit", (ctx, who, id) => showBalance(ctx, who, id, { form: formOf(ctx) }, null)),
    route(deps, "POST", "/merchants/:id/balance/review", async (ctx, who, id) => {
      const t = textsOf(who);
      const form = formOf(ctx);
      const read = readAdjustment(t, form, who.lang);
      if (!isAdjustment(read)) return showBalance(ctx, who, id, { form, errors: read }, null, 400);
      const m = await merchantOr(ctx, who, id);
      if (!m) return;
      const now = await who
        .client(PayoutService)
        .getBalances({ merchantId: id })
        .then((res) => res.balances.find((b) => b.currency === read.currency)?.available ?? 0n)
        .catch(() => undefined);
      workPage(ctx, who, { title: t("review.title", { name: m.name }), body: reviewBody(who, t, m, read, now) });
    }),
    route(deps, "POST", "/merchants/:id/balance/adjust", async (ctx, who, id) => {
      const t = textsOf(who);
      const form = formOf(ctx);
      const read = readAdjustment(t, form, who.lang, true);
      if (!isAdjustment(read)) return showBalance(ctx, who, id, { form: { ...form, amount: "" }, errors: read }, null, 400);
      try {
        const res = await who.client(PayoutService).adjustBalance({ merchantId: id, amount: read.direction === "credit" ? read.amount : -read.amount, currency: read.currency, reason: read.reason });
        seeOther(ctx, linkTo(`/merchants/${id}/balance`, { done: "posted", entry: res.entry?.id }));
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        if (refusal.approvalId) return seeOther(ctx, linkTo(`/merchants/${id}/balance`, { approval: refusal.approvalId }));
        await showBalance(ctx, who, id, { form: { ...form, amount: formatMajorPlain(read.amount, who.lang) }, refusal }, null, refusal.status);
      }
    }),
  ];
}
