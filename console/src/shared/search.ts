import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { DepositService, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService } from "@payments/contracts/operator";
import { PayoutService, type Withdrawal } from "@payments/contracts/payout";
import { roleAtLeast } from "@payments/access";
import { findApproval } from "../auth/approvals.js";
import { nowMs, type ConsoleContext } from "../context.js";
import { html, type SafeHtml } from "../html.js";
import type { Language } from "../i18n.js";
import { merchantPage, merchantRoute, tableScroll } from "../merchant/merchant-call.js";
import { defineTexts } from "../merchant/texts.js";
import { SERVICES, signedIn, workPage, type SignedIn } from "../pages/operator-call.js";
import type { ConsoleRoute } from "../route.js";
import type { ServiceName } from "../service-clients.js";
import type { ConsoleContextKoa } from "../state.js";
import { approvalText } from "./approval-texts.js";
import { formatMoney } from "./format.js";

/*
 * One search box on both sides. What is typed is read as the first of: an id by its prefix
 * (dep_ deposit, wdr_ withdrawal, trf_ incoming transfer, mer_ merchant, apr_ approval, trr_
 * transfer return, whc_ withheld credit), a Turkish IBAN (deposits paid to it, withdrawals sent to
 * it), or words: a process id, a deposit's reference, a customer's name (its start), a
 * withdrawal's account holder (its start). Every look-up is the services' own read as the signed-in
 * person, so a merchant's user finds only their merchant's things (the services scope it) and
 * another merchant's id is the same "nothing found" as one that does not exist. One exact hit
 * answers 303 to its page; several are listed with their names; none says so.
 */

export const searchTexts = defineTexts(
  {
    label: "Search",
    title: "Search",
    hint: "An id (dep_, wdr_, trf_, mer_, apr_, trr_, whc_), a reference, a process id, an IBAN or a customer's or account holder's name.",
    none: "Nothing found for “{q}”.",
    empty: "Type what you are looking for.",
    caption: "What was found for “{q}”",
    what: "What",
    name: "Name",
    detail: "Amount",
    "kind.deposit": "Deposit",
    "kind.withdrawal": "Withdrawal",
    "kind.transfer": "Incoming transfer",
    "kind.merchant": "Merchant",
    "kind.approval": "Approval",
    "kind.return": "Transfer return",
    "kind.withheld": "Withheld credit",
  },
  {
    label: "Ara",
    title: "Arama",
    hint: "Bir kimlik (dep_, wdr_, trf_, mer_, apr_, trr_, whc_), bir referans, bir işlem numarası, bir IBAN ya da müşterinin veya hesap sahibinin adı.",
    none: "“{q}” için bir şey bulunamadı.",
    empty: "Aradığınızı yazın.",
    caption: "“{q}” için bulunanlar",
    what: "Ne",
    name: "Ad",
    detail: "Tutar",
    "kind.deposit": "Yatırma",
    "kind.withdrawal": "Çekim",
    "kind.transfer": "Gelen havale",
    "kind.merchant": "Üye işyeri",
    "kind.approval": "Onay",
    "kind.return": "Havale iadesi",
    "kind.withheld": "Bekletilen alacak",
  },
);

type HitKind = "deposit" | "withdrawal" | "transfer" | "merchant" | "approval" | "return" | "withheld";

export interface SearchHit {
  kind: HitKind;
  id: string;
  href: string;
  /** The name first: the customer, the account holder, the sender, the merchant, what an approval does. */
  name: string;
  detail: string;
}

export type Side = "operators" | "merchant";
type Clients = <S extends DescService>(service: S, serviceName?: ServiceName) => Client<S>;

const MAX_QUERY = 120;
const LIST_LIMIT = 20;
const IBAN = /^TR\d{24}$/;
const ID = /^(dep|wdr|trf|mer|apr|trr|whc)_[A-Za-z0-9_-]{1,76}$/;

/** A read that found nothing (not found, refused, invalid, the service away) is no hit: the answer never says which. */
async function quietly<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch {
    return undefined;
  }
}

const depositHit = (d: Deposit, lang: Language, base: string): SearchHit => ({ kind: "deposit", id: d.id, href: `${base}/deposits/${d.id}`, name: d.customer?.name || d.processId, detail: formatMoney(d.requestedAmount, d.currency, lang) });
const withdrawalHit = (w: Withdrawal, lang: Language, base: string): SearchHit => ({ kind: "withdrawal", id: w.id, href: `${base}/withdrawals/${w.id}`, name: w.accountName || w.processId, detail: formatMoney(w.amount, w.currency, lang) });

/** Deposits and withdrawals by IBAN, reference, process id or name: what both sides search the same way (`all`: every merchant, operators only). */
async function byWords(client: Clients, q: string, lang: Language, side: Side): Promise<SearchHit[]> {
  const all = side === "operators";
  const base = all ? "" : "/merchant";
  const deposits = client(DepositService);
  const payouts = client(PayoutService);
  const scope = { allMerchants: all, limit: LIST_LIMIT };
  const compact = q.replace(/\s+/g, "").toUpperCase();
  if (IBAN.test(compact)) {
    const [d, w] = await Promise.all([quietly(() => deposits.listDeposits({ ...scope, accountIban: compact })), quietly(() => payouts.listWithdrawals({ ...scope, iban: compact }))]);
    return [...(d?.deposits ?? []).map((x) => depositHit(x, lang, base)), ...(w?.withdrawals ?? []).map((x) => withdrawalHit(x, lang, base))];
  }
  const [byProcess, byProcessW, byReference, byName, byHolder] = await Promise.all([
    // A process id names one payment within one merchant: the merchant's own user asks (the service pins the merchant).
    all ? undefined : quietly(() => deposits.getDeposit({ key: { case: "processId", value: q } })),
    all ? undefined : quietly(() => payouts.getWithdrawal({ key: { case: "processId", value: q } })),
    quietly(() => deposits.listDeposits({ ...scope, reference: q })),
    quietly(() => deposits.listDeposits({ ...scope, customerName: q })),
    quietly(() => payouts.listWithdrawals({ ...scope, holderName: q })),
  ]);
  const found = [...(byProcess?.deposit ? [byProcess.deposit] : []), ...(byReference?.deposits ?? []), ...(byName?.deposits ?? [])].map((x) => depositHit(x, lang, base));
  found.push(...[...(byProcessW?.withdrawal ? [byProcessW.withdrawal] : []), ...(byHolder?.withdrawals ?? [])].map((x) => withdrawalHit(x, lang, base)));
  return found.filter((hit, i) => found.findIndex((h) => h.id === hit.id) === i);
}

/** An id's one thing, as the signed-in operator may read it (each service decides). */
async function operatorById(deps: ConsoleContext, who: SignedIn, id: string): Promise<SearchHit[]> {
  const lang = who.lang;
  const prefix = id.slice(0, id.indexOf("_"));
  const payouts = who.client(PayoutService);
  switch (prefix) {
    case "dep": {
      const d = (await quietly(() => who.client(DepositService).getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })))?.deposit;
      return d ? [depositHit(d, lang, "")] : [];
    }
    case "wdr": {
      const w = (await quietly(() => payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })))?.withdrawal;
      return w ? [withdrawalHit(w, lang, "")] : [];
    }
    case "trf": {
      const tr = (await quietly(() => who.client(DepositService).getTransfer({ transferId: id })))?.transfer;
      return tr ? [{ kind: "transfer", id, href: `/transfers/${id}`, name: tr.senderName || tr.reference, detail: formatMoney(tr.amount, tr.currency, lang) }] : [];
    }
    case "mer": {
      const m = (await quietly(() => who.client(MerchantService).getMerchant({ merchantId: id })))?.merchant;
      return m ? [{ kind: "merchant", id, href: `/merchants/${id}`, name: m.name, detail: "" }] : [];
    }
    case "apr":
      return approvalById(deps, who, id);
    case "trr": {
      const r = (await quietly(() => payouts.listTransferReturns({ limit: 500 })))?.transferReturns.find((x) => x.id === id);
      return r ? [{ kind: "return", id, href: `/transfer-returns/${r.transferId}`, name: r.recipientName, detail: formatMoney(r.amount, r.currency, lang) }] : [];
    }
    default: {
      const c = (await quietly(() => payouts.listWithheldCredits({ limit: 500 })))?.credits.find((x) => x.id === id);
      return c ? [{ kind: "withheld", id, href: `/withheld-credits/${c.merchantId}/${id}`, name: c.processId, detail: formatMoney(c.amount, c.currency, lang) }] : [];
    }
  }
}

/** An approval in whichever service keeps it, or the console's own account change (admins decide those, so only they find them). */
async function approvalById(deps: ConsoleContext, who: SignedIn, id: string): Promise<SearchHit[]> {
  const found = await Promise.all(SERVICES.map(async (service) => ({ service, approval: (await quietly(() => who.client(ApprovalService, service).getApproval({ id })))?.approval })));
  const hits: SearchHit[] = found.flatMap(({ service, approval }) => (approval ? [{ kind: "approval" as const, id, href: `/approvals/${service}/${id}`, name: approvalText(who.lang, approval), detail: "" }] : []));
  if (hits.length === 0 && roleAtLeast(who.operator.role, "admin")) {
    const own = await findApproval(deps.db, id, nowMs(deps));
    if (own) hits.push({ kind: "approval", id, href: `/approvals/console/${id}`, name: own.targetEmail, detail: "" });
  }
  return hits;
}

/** A merchant's user's search: their merchant's deposits and withdrawals only (the services scope every read). */
async function merchantSearch(client: Clients, merchantId: string, q: string, lang: Language): Promise<SearchHit[]> {
  if (q === merchantId) return [{ kind: "merchant", id: q, href: "/merchant", name: q, detail: "" }];
  if (q.startsWith("dep_")) {
    const d = (await quietly(() => client(DepositService).getDeposit({ key: { case: "depositId", value: q } })))?.deposit;
    return d ? [depositHit(d, lang, "/merchant")] : [];
  }
  if (q.startsWith("wdr_")) {
    const w = (await quietly(() => client(PayoutService).getWithdrawal({ key: { case: "withdrawalId", value: q } })))?.withdrawal;
    return w ? [withdrawalHit(w, lang, "/merchant")] : [];
  }
  // Ids of what a merchant's user has no page for (another merchant's included): nothing, as for any unknown id.
  if (ID.test(q)) return [];
  return byWords(client, q, lang, "merchant");
}

function resultsBody(lang: Language, q: string, hits: SearchHit[], side: Side): SafeHtml {
  const t = (key: Parameters<typeof searchTexts>[1], params?: Record<string, string>) => searchTexts(lang, key, params);
  const form = html`<form method="get" action="${side === "operators" ? "/search" : "/merchant/search"}" role="search"><label for="search-page-q">${t("label")}</label><input id="search-page-q" name="q" type="search" value="${q}" maxlength="${MAX_QUERY}" aria-describedby="search-page-hint"><p class="hint" id="search-page-hint">${t("hint")}</p><button type="submit">${t("label")}</button></form>`;
  if (!q) return html`${form}<p>${t("empty")}</p>`;
  if (hits.length === 0) return html`${form}<p role="status">${t("none", { q })}</p>`;
  const rows = hits.map((h) => html`<tr><td>${t(`kind.${h.kind}`)}</td><th scope="row"><a href="${h.href}">${h.name || h.id}</a></th><td><code>${h.id}</code></td><td class="num">${h.detail}</td></tr>`);
  return html`${form}${tableScroll(t("caption", { q }), html`<table><caption>${t("caption", { q })}</caption><thead><tr><th scope="col">${t("what")}</th><th scope="col">${t("name")}</th><th scope="col">Id</th><th scope="col" class="num">${t("detail")}</th></tr></thead><tbody>${rows}</tbody></table>`)}`;
}

/** A search's answer: one exact hit is its page (303); several, or none, the results page. */
function answer(ctx: ConsoleContextKoa, hits: SearchHit[], render: () => void): void {
  const [only] = hits;
  if (hits.length === 1 && only) {
    ctx.status = 303;
    ctx.redirect(only.href);
    return;
  }
  render();
}

const queryOf = (ctx: ConsoleContextKoa) => (typeof ctx.query.q === "string" ? ctx.query.q.trim().slice(0, MAX_QUERY) : "");

/** `GET /search?q=` for operators and `GET /merchant/search?q=` for a merchant's users. */
export function searchPages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    {
      method: "GET",
      path: "/search",
      access: "operator",
      handler: async (ctx) => {
        const who = signedIn(deps, ctx);
        const q = queryOf(ctx);
        const hits = !q ? [] : ID.test(q) ? await operatorById(deps, who, q) : await byWords(who.client, q, who.lang, "operators");
        answer(ctx, hits, () => workPage(ctx, who, { title: searchTexts(who.lang, "title"), body: resultsBody(who.lang, q, hits, "operators") }));
      },
    },
    merchantRoute(deps, { method: "GET", path: "/merchant/search" }, async (ctx, who) => {
      const q = queryOf(ctx);
      const hits = q ? await merchantSearch(who.client, who.user.merchantId, q, who.lang) : [];
      answer(ctx, hits, () => merchantPage(ctx, who, { title: searchTexts(who.lang, "title"), body: resultsBody(who.lang, q, hits, "merchant") }));
    }),
  ];
}
