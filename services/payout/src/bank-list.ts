import { dropOnCatalogChange, EventCache, validationError, type BaseContext, type Subscription } from "@payments/kit";
import type { PayoutContext } from "./context.js";

/** FAST is on the merchant's bank list next to the banks (its `_id` is FAST), so a payout may name it too. */
const FAST_BANK_ID = "FAST";

/**
 * The ids of every bank of the catalog (ListBanks, active or not), kept until the bank
 * catalog announces a change (CatalogChanged) or `ttlMs` passes (the bound when an event is
 * lost); 0 turns it off. A withdrawal then checks its bank id without calling the catalog.
 */
export function createBankIdsCache(base: Pick<BaseContext, "clock" | "logger">, ttlMs: number): EventCache<ReadonlySet<string>> {
  return new EventCache<ReadonlySet<string>>({ clock: base.clock, ttlMs, maxEntries: 1, name: "payout-bank-ids", logger: base.logger });
}

/** Drops the bank ids when the catalog changes. */
export function watchCatalogChanges(ctx: Pick<PayoutContext, "bus" | "bankIdsCache">): Promise<Subscription> {
  return dropOnCatalogChange(ctx.bankIdsCache, ctx.bus);
}

function bankIds(ctx: PayoutContext): Promise<ReadonlySet<string>> {
  return ctx.bankIdsCache.get("", async () => new Set((await ctx.bankCatalog.listBanks({})).banks.map((bank) => bank.id)));
}

/** bank_id, when given, names a bank of the catalog (active or not: it only labels the recipient's bank). */
export async function requireKnownBank(ctx: PayoutContext, bankId: string): Promise<void> {
  if (bankId === FAST_BANK_ID) return;
  if (!(await bankIds(ctx)).has(bankId)) {
    throw validationError("bank_id", `bank_id: ${JSON.stringify(bankId)} is not a bank of the bank list`);
  }
}
