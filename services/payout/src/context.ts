import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService, type Merchant } from "@payments/contracts/merchant";
import { envVar, loadConfig, type BaseContext, type Env, type EventCache, type MerchantCache } from "@payments/kit";
import { z } from "zod";
import type { BankConnector } from "./bank-connector.js";

/**
 * The connectors a live merchant's withdrawals may go to (PAYOUT_CONNECTOR). `sandbox` is
 * deliberately not one: sandbox merchants' withdrawals always go to the sandbox connector,
 * and live money never goes through the simulator.
 */
export const LIVE_CONNECTORS = ["manual"] as const;
export type LiveConnectorName = (typeof LIVE_CONNECTORS)[number];

function isLiveConnector(name: string): name is LiveConnectorName {
  return (LIVE_CONNECTORS as readonly string[]).includes(name);
}

const liveConnector = z
  .string()
  .default("manual")
  .transform((text, ctx): LiveConnectorName => {
    const name = text.trim().toLowerCase();
    if (isLiveConnector(name)) return name;
    const known = `the live connectors are: ${LIVE_CONNECTORS.join(", ")}`;
    ctx.addIssue({
      code: "custom",
      message:
        name === "sandbox"
          ? `"sandbox" is not a live connector: sandbox merchants' withdrawals always go to the sandbox connector, and live money never goes through the simulator (${known})`
          : `"${text}" is not a live connector (${known})`,
    });
    return z.NEVER;
  });

/** The payout service's own settings, on top of the kit's base settings. */
export const payoutConfigSchema = z.object({
  /** ISO 4217 codes accepted for withdrawals; TRY is the default when a request names none. */
  SUPPORTED_CURRENCIES: envVar.currencies(),
  /** Where live merchants' withdrawals go. */
  PAYOUT_CONNECTOR: liveConnector,
  /** How often the payout worker looks for pending withdrawals. */
  PAYOUT_WORKER_INTERVAL: envVar.duration("500ms"),
  /** How many withdrawals one worker claims at a time. */
  PAYOUT_WORKER_BATCH: envVar.int(20, 1),
  /** A withdrawal handed to the bank without an answer (crash, timeout) is sent again, with the same idempotency key, after this long. */
  PAYOUT_RESEND_AFTER: envVar.duration("1m"),
  /** Whether this process runs the payout worker (turn off to run API-only replicas). */
  PAYOUT_WORKER: envVar.flag(true),
  /** The sandbox connector's delay before it answers. */
  SANDBOX_PAYOUT_DELAY: envVar.duration("2s"),
  /** How long a merchant (exists, sandbox or live) is kept when no MerchantChanged event drops it first; 0: asked every time. */
  MERCHANT_CACHE_TTL: envVar.duration("30s"),
  /** How long the bank catalog's bank ids are kept when no CatalogChanged event drops them first; 0: asked on every withdrawal that names a bank. */
  CATALOG_CACHE_TTL: envVar.duration("30s"),
  /** How long an API key's withdrawal above the merchant's approval threshold waits for a second person of the merchant before it is cancelled (APPROVAL_EXPIRED). */
  WITHDRAWAL_APPROVAL_TTL: envVar.duration("24h").refine((ms) => ms >= 1000, "must be at least 1s"),
  /** How often the expiry job looks for approvals that lapsed. */
  WITHDRAWAL_APPROVAL_EXPIRY_INTERVAL: envVar.duration("10s").refine((ms) => ms >= 100, "must be at least 100ms"),
});
export type PayoutConfig = z.infer<typeof payoutConfigSchema>;

/** Where the worker sends a withdrawal: by the sandbox flag recorded on it at creation. */
export interface PayoutConnectors {
  sandbox: BankConnector;
  live: BankConnector;
}

export interface PayoutContext extends BaseContext {
  config: PayoutConfig;
  bankCatalog: Client<typeof BankCatalogService>;
  merchants: Client<typeof MerchantService>;
  /** GetMerchant answers by merchant id, dropped on MerchantChanged (src/merchants.ts). */
  merchantCache: MerchantCache<Merchant>;
  /** The catalog's bank ids, dropped on CatalogChanged (src/bank-list.ts). */
  bankIdsCache: EventCache<ReadonlySet<string>>;
  connectors: PayoutConnectors;
}

export function loadPayoutConfig(env: Env): PayoutConfig {
  return loadConfig(payoutConfigSchema, env);
}
