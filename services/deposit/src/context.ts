import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { envVar, loadConfig, type BaseContext, type Env } from "@payments/kit";
import { z } from "zod";

/** The deposit service's own settings, on top of the kit's base settings. */
export const depositConfigSchema = z.object({
  /** How long a deposit waits for its transfer before it expires. */
  DEPOSIT_TTL: envVar.duration("30m"),
  /** How often the expiry job looks for pending deposits past their expiry. */
  DEPOSIT_EXPIRY_INTERVAL: envVar.duration("1s"),
  /** How long after a deposit is final its checkout link still shows the outcome. */
  CHECKOUT_KEEP_FINAL: envVar.duration("24h"),
  /** ISO 4217 codes accepted for deposits; the first is not special, TRY is the default when a request names none. */
  SUPPORTED_CURRENCIES: envVar.currencies(),
});
export type DepositConfig = z.infer<typeof depositConfigSchema>;

export interface DepositContext extends BaseContext {
  config: DepositConfig;
  bankCatalog: Client<typeof BankCatalogService>;
  merchants: Client<typeof MerchantService>;
}

export function loadDepositConfig(env: Env): DepositConfig {
  return loadConfig(depositConfigSchema, env);
}

export function createDepositContext(base: BaseContext): DepositContext {
  return {
    ...base,
    config: loadDepositConfig(base.env),
    bankCatalog: base.client(BankCatalogService, "bank-catalog"),
    merchants: base.client(MerchantService, "merchant"),
  };
}
