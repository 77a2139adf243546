import { MerchantService } from "@payments/contracts/merchant";
import { DepositService } from "@payments/contracts/deposit";
import { ApprovalService } from "@payments/contracts/operator";
import { PayoutService } from "@payments/contracts/payout";
import { roleAtLeast } from "@payments/access";
import { findApproval } from "../identity/approvals.js";
import { nowMs, type ConsoleContext } from "../context.js";
import type { ConsoleRoute } from "../route.js";
import { approvalText } from "../shared/approval-texts.js";
import { formatMoney } from "../shared/format.js";
import { answer, byWords, depositHit, ID, queryOf, quietly, resultsBody, searchTexts, withdrawalHit, type SearchHit } from "../shared/search.js";
import { operatorRoute, SERVICES, type SignedIn, workPage } from "./operator-call.js";

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

/** `GET /search?q=`: any id, reference, IBAN or name across every merchant, as the signed-in operator may read it. */
export function operatorSearchPages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    operatorRoute(deps, { method: "GET", path: "/search" }, async (ctx, who) => {
      const q = queryOf(ctx);
      const hits = !q ? [] : ID.test(q) ? await operatorById(deps, who, q) : await byWords(who.client, q, who.lang, "operators");
      answer(ctx, hits, () => workPage(ctx, who, { title: searchTexts(who.lang, "title"), body: resultsBody(who.lang, q, hits, "operators") }));
    }),
  ];
}
