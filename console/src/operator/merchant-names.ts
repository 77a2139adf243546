import { MerchantService } from "@payments/contracts/merchant";
import { html, type SafeHtml } from "../html.js";
import type { SignedIn } from "../pages/operator-call.js";

/**
 * The merchants' names the merchant service shows this operator, by id, asked once per merchant
 * and in parallel; a merchant it does not show (or a service that does not answer) keeps its id.
 */
export async function merchantNamesOf(who: SignedIn, merchantIds: Iterable<string>): Promise<Map<string, string>> {
  const ids = [...new Set([...merchantIds].filter(Boolean))];
  const names = new Map<string, string>();
  await Promise.all(
    ids.map(async (merchantId) => {
      try {
        const name = (await who.client(MerchantService).getMerchant({ merchantId })).merchant?.name;
        if (name) names.set(merchantId, name);
      } catch {
        // Not shown to this operator, or the service does not answer: the id stands for it.
      }
    }),
  );
  return names;
}

/** A merchant as a page names it: its name linked to its page, the id after it (only the id when no name is known). */
export function merchantCell(names: Map<string, string>, merchantId: string): SafeHtml {
  const name = names.get(merchantId);
  return name ? html`<a href="${`/merchants/${merchantId}`}">${name}</a> <span class="hint">${merchantId}</span>` : html`<a href="${`/merchants/${merchantId}`}">${merchantId}</a>`;
}
