import { envVar, loadConfig, type BaseContext, type Env } from "@payments/kit";
import { z } from "zod";
import { CatalogSnapshots } from "./catalog-snapshot.js";

/** The catalog's own settings, on top of the kit's base settings. */
export const bankCatalogConfigSchema = z.object({
  /**
   * How long a snapshot of the catalog serves the read RPCs when no change event arrives (a
   * change made here drops it at once, one made by another replica when its event arrives).
   * 0: every read goes to the database.
   */
  CATALOG_CACHE_TTL: envVar.duration("30s"),
});
export type BankCatalogConfig = z.infer<typeof bankCatalogConfigSchema>;

/** What the handlers get: the kit's database, clock and logger, the settings, and the snapshot of the catalog the reads use. */
export interface BankCatalogContext extends BaseContext {
  config: BankCatalogConfig;
  catalog: CatalogSnapshots;
}

export function loadBankCatalogConfig(env: Env): BankCatalogConfig {
  return loadConfig(bankCatalogConfigSchema, env);
}

export function createBankCatalogContext(base: BaseContext): BankCatalogContext {
  const config = loadBankCatalogConfig(base.env);
  return {
    ...base,
    config,
    catalog: new CatalogSnapshots({ db: base.db, clock: base.clock, ttlMs: config.CATALOG_CACHE_TTL, logger: base.logger }),
  };
}
