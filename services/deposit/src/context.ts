import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { envVar, loadConfig, type BaseContext, type Env, type EventCache, type MerchantCache } from "@payments/kit";
import { z } from "zod";
import { bankFeedsSetting } from "./bank-feed/http.js";
import { createMerchantCache, type MerchantFacts } from "./merchant-lookup.js";
import { createDepositTermsCache, type DepositTermsAnswer } from "./deposit-terms.js";

/** The deposit service's own settings, on top of the kit's base settings. */
export const depositConfigSchema = z.object({
  /** How long a deposit waits for its transfer before it expires. */
  DEPOSIT_TTL: envVar.duration("30m"),
  /** How often the expiry job looks for pending deposits past their expiry. */
  DEPOSIT_EXPIRY_INTERVAL: envVar.duration("1s"),
  /** How long after a deposit is final its checkout link still shows the outcome. */
  CHECKOUT_KEEP_FINAL: envVar.duration("24h"),
  /**
   * How long GetCheckout waits for the merchant's display name when it is not cached before
   * answering without it (the page then names no one). Well under the gateway's RPC_TIMEOUT,
   * so a merchant service that hangs never takes the checkout page down with it.
   */
  CHECKOUT_MERCHANT_TIMEOUT: envVar.duration("1s"),
  /** ISO 4217 codes accepted for deposits; the first is not special, TRY is the default when a request names none. */
  SUPPORTED_CURRENCIES: envVar.currencies(),
  /**
   * Kuruş. A live deposit confirmed by hand, or a live transfer matched or completed by hand,
   * above this needs a second operator's approval (four-eyes). 1,000,000 = 10,000 TRY.
   */
  APPROVAL_THRESHOLD: envVar.int(1_000_000, 0),
  /** How long a merchant's facts (exists, active, sandbox, display name) are kept when no MerchantChanged event drops them first; 0: asked on every deposit. */
  MERCHANT_CACHE_TTL: envVar.duration("30s"),
  /** How long the bank catalog's deposit terms are kept when no CatalogChanged event drops them first; 0: asked on every deposit. */
  CATALOG_CACHE_TTL: envVar.duration("30s"),
  /**
   * How long after a deposit expired a transfer can still match it as a late payment (the
   * merchant's late-payment rule then decides); older expired deposits are not candidates,
   * and such a transfer waits in suspense for an operator.
   */
  LATE_PAYMENT_WINDOW: envVar.duration("7d"),
  /** A directory watched for bank statement files (bank-feed/dir.ts); unset: off. */
  BANK_FEED_DIR: z.string().optional(),
  /** How often BANK_FEED_DIR is scanned. */
  BANK_FEED_INTERVAL: envVar.duration("10s"),
  /**
   * How long a file may stay claimed in BANK_FEED_DIR/processing/ before a scan takes it back to
   * the directory for another try: its replica is presumed dead. Far longer than any import, since
   * a live replica whose claim is taken back imports the file twice (harmless, but wasted).
   */
  BANK_FEED_CLAIM_TIMEOUT: envVar.duration("15m"),
  /** The JSON push feeds (bank-feed/http.ts): comma-separated feedId:secret; a feedId twice = both secrets valid. */
  BANK_FEEDS: bankFeedsSetting(),
});
export type DepositConfig = z.infer<typeof depositConfigSchema>;

export interface DepositContext extends BaseContext {
  config: DepositConfig;
  bankCatalog: Client<typeof BankCatalogService>;
  merchants: Client<typeof MerchantService>;
  /** GetMerchant answers by merchant id, dropped on MerchantChanged (src/merchant-lookup.ts). */
  merchantCache: MerchantCache<MerchantFacts>;
  /** GetDepositTerms answers by (merchant, bank, kind), dropped on CatalogChanged (src/deposit-terms.ts). */
  depositTermsCache: EventCache<DepositTermsAnswer>;
}

export function loadDepositConfig(env: Env): DepositConfig {
  return loadConfig(depositConfigSchema, env);
}

export function createDepositContext(base: BaseContext): DepositContext {
  const config = loadDepositConfig(base.env);
  return {
    ...base,
    config,
    bankCatalog: base.client(BankCatalogService, "bank-catalog"),
    merchants: base.client(MerchantService, "merchant"),
    merchantCache: createMerchantCache(base, config.MERCHANT_CACHE_TTL),
    depositTermsCache: createDepositTermsCache(base, config.CATALOG_CACHE_TTL),
  };
}
