import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { DepositService, type Deposit } from "@payments/contracts/deposit";
import { PayoutService, type Withdrawal } from "@payments/contracts/payout";
import { formatMoney } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import type { Language } from "./i18n.js";
import { tableScroll } from "./table.js";
import { defineTexts } from "./texts.js";
import type { ServiceName } from "../service-clients.js";
import type { ConsoleContextKoa } from "../state.js";

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
export type Clients = <S extends DescService>(service: S, serviceName?: ServiceName) => Client<S>;

const MAX_QUERY = 120;
const LIST_LIMIT = 20;
const IBAN = /^TR\d{24}$/;
export const ID = /^(dep|wdr|trf|mer|apr|trr|whc)_[A-Za-z0-9_-]{1,76}$/;

/** A read that found nothing (not found, refused, invalid, the service away) is no hit: the answer never says which. */
export async function quietly<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch {
    return undefined;
  }
}

export const depositHit = (d: Deposit, lang: Language, base: string): SearchHit => ({ kind: "deposit", id: d.id, href: `${base}/deposits/${d.id}`, name: d.customer?.name || d.processId, detail: formatMoney(d.requestedAmount, d.currency, lang) });
export const withdrawalHit = (w: Withdrawal, lang: Language, base: string): SearchHit => ({ kind: "withdrawal", id: w.id, href: `${base}/withdrawals/${w.id}`, name: w.accountName || w.processId, detail: formatMoney(w.amount, w.currency, lang) });

/** Deposits and withdrawals by IBAN, reference, process id or name: what both sides search the same way (`all`: every merchant, operators only). */
export async function byWords(client: Clients, q: string, lang: Language, side: Side): Promise<SearchHit[]> {
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

export function resultsBody(lang: Language, q: string, hits: SearchHit[], side: Side): SafeHtml {
  const t = (key: Parameters<typeof searchTexts>[1], params?: Record<string, string>) => searchTexts(lang, key, params);
  const form = html`<form method="get" action="${side === "operators" ? "/search" : "/merchant/search"}" role="search"><label for="search-page-q">${t("label")}</label><input id="search-page-q" name="q" type="search" value="${q}" maxlength="${MAX_QUERY}" aria-describedby="search-page-hint"><p class="hint" id="search-page-hint">${t("hint")}</p><button type="submit">${t("label")}</button></form>`;
  if (!q) return html`${form}<p>${t("empty")}</p>`;
  if (hits.length === 0) return html`${form}<p role="status">${t("none", { q })}</p>`;
  const rows = hits.map((h) => html`<tr><td>${t(`kind.${h.kind}`)}</td><th scope="row"><a href="${h.href}">${h.name || h.id}</a></th><td><code>${h.id}</code></td><td class="num">${h.detail}</td></tr>`);
  return html`${form}${tableScroll(t("caption", { q }), html`<table><caption>${t("caption", { q })}</caption><thead><tr><th scope="col">${t("what")}</th><th scope="col">${t("name")}</th><th scope="col">Id</th><th scope="col" class="num">${t("detail")}</th></tr></thead><tbody>${rows}</tbody></table>`)}`;
}

/** A search's answer: one exact hit is its page (303); several, or none, the results page. */
export function answer(ctx: ConsoleContextKoa, hits: SearchHit[], render: () => void): void {
  const [only] = hits;
  if (hits.length === 1 && only) {
    ctx.status = 303;
    ctx.redirect(only.href);
    return;
  }
  render();
}

export const queryOf = (ctx: ConsoleContextKoa) => (typeof ctx.query.q === "string" ? ctx.query.q.trim().slice(0, MAX_QUERY) : "");

