import { DepositService } from "@payments/contracts/deposit";
import { PayoutService } from "@payments/contracts/payout";
import type { ConsoleContext } from "../context.js";
import type { ConsoleRoute } from "../route.js";
import type { Language } from "../shared/i18n.js";
import { answer, byWords, depositHit, ID, queryOf, quietly, resultsBody, searchTexts, withdrawalHit, type Clients, type SearchHit } from "../shared/search.js";
import { merchantPage, merchantRoute } from "./merchant-call.js";

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

/** `GET /merchant/search?q=`: the signed-in user's merchant's payments only (the services scope every read). */
export function merchantSearchPages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    merchantRoute(deps, { method: "GET", path: "/merchant/search" }, async (ctx, who) => {
      const q = queryOf(ctx);
      const hits = q ? await merchantSearch(who.client, who.user.merchantId, q, who.lang) : [];
      answer(ctx, hits, () => merchantPage(ctx, who, { title: searchTexts(who.lang, "title"), body: resultsBody(who.lang, q, hits, "merchant") }));
    }),
  ];
}
