import type { Client } from "@connectrpc/connect";
import type { PayoutService } from "@payments/contracts/payout";

export interface LedgerCheck {
  merchants: number;
  entries: number;
  /** One line per merchant and currency whose balance is not the sum of its ledger. */
  mismatches: string[];
  ok: boolean;
}

type Sums = Map<string, { available: bigint; held: bigint }>;

function key(sums: Sums, currency: string) {
  let entry = sums.get(currency);
  if (!entry) sums.set(currency, (entry = { available: 0n, held: 0n }));
  return entry;
}

/**
 * For every merchant: GetBalances, every ledger entry (ListLedgerEntries, paged), then
 * GetBalances again. The payout worker may still be moving withdrawals, so a merchant whose
 * balance changed between the two reads is read again (up to 8 times) until it holds still;
 * then each currency's available and held must equal the sums of the entries' deltas.
 */
export async function checkLedger(payouts: Client<typeof PayoutService>, merchantIds: readonly string[]): Promise<LedgerCheck> {
  const mismatches: string[] = [];
  let entries = 0;
  const balanceText = async (merchantId: string) => {
    const { balances } = await payouts.getBalances({ merchantId });
    const sums: Sums = new Map();
    for (const b of balances) Object.assign(key(sums, b.currency), { available: b.available, held: b.held });
    return { sums, text: JSON.stringify(balances.map((b) => [b.currency, String(b.available), String(b.held)])) };
  };
  const checkOne = async (merchantId: string) => {
    for (let attempt = 1; ; attempt++) {
      const before = await balanceText(merchantId);
      const ledger: Sums = new Map();
      let count = 0;
      let cursor = "";
      do {
        const page = await payouts.listLedgerEntries({ merchantId, limit: 500, cursor });
        for (const e of page.entries) {
          const sum = key(ledger, e.currency);
          sum.available += e.availableDelta;
          sum.held += e.heldDelta;
        }
        count += page.entries.length;
        cursor = page.nextCursor;
      } while (cursor !== "");
      const after = await balanceText(merchantId);
      if (before.text !== after.text && attempt < 8) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      entries += count;
      const currencies = new Set([...before.sums.keys(), ...ledger.keys()]);
      for (const currency of currencies) {
        const balance = before.sums.get(currency) ?? { available: 0n, held: 0n };
        const sum = ledger.get(currency) ?? { available: 0n, held: 0n };
        if (balance.available !== sum.available || balance.held !== sum.held) {
          mismatches.push(
            `${merchantId} ${currency}: balance available ${balance.available} held ${balance.held}, ledger sums ${sum.available} / ${sum.held}${before.text !== after.text ? " (balance still moving)" : ""}`,
          );
        }
      }
      return;
    }
  };
  // A few merchants at a time: the product is still busy with the withdrawals' backlog.
  const queue = [...merchantIds];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) await checkOne(id);
    }),
  );
  return { merchants: merchantIds.length, entries, mismatches, ok: mismatches.length === 0 };
}
