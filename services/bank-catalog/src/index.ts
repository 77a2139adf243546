import { BankCatalogService } from "@payments/contracts/bank-catalog";
import type { ServiceModule } from "@payments/kit";
import { migrations } from "./migrations/index.js";
import { createBankCatalogContext, type BankCatalogContext } from "./context.js";
import { routes } from "./routes/index.js";
import { bankCatalogAccess } from "./access.js";

export { bankCatalogConfigSchema, loadBankCatalogConfig, type BankCatalogConfig, type BankCatalogContext } from "./context.js";
export { CatalogSnapshots, type CatalogSnapshot } from "./catalog-snapshot.js";
export { FAST_ID } from "./limits.js";
export { SEED_ACCOUNTS, seedSandboxAccounts } from "./seed.js";

/** Banks, FAST, per-merchant availability and limits, and the receiving-account pool. */
export const bankCatalogModule: ServiceModule<BankCatalogContext> = {
  name: "bank-catalog",
  services: [BankCatalogService],
  migrations,
  createContext: createBankCatalogContext,
  routes,
  access: bankCatalogAccess,
  // Every replica drops its snapshot on any replica's change.
  start: async (ctx) => [await ctx.catalog.watch(ctx.bus)],
};
