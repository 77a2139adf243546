import type { BaseContext } from "@payments/kit";

/**
 * What the handlers get: the kit's database, clock and logger. The catalog needs nothing
 * of its own (no settings, no clients of other services, no background jobs), so its
 * context is the base one; it stays a named type so one can be added without touching
 * every route.
 */
export type BankCatalogContext = BaseContext;

export function createBankCatalogContext(base: BaseContext): BankCatalogContext {
  return base;
}
