import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { envVar, loadConfig, type BaseContext, type Env } from "@payments/kit";
import { z } from "zod";
import type { BankConnector } from "./bank-connector.js";

/** The payout service's own settings, on top of the kit's base settings. */
export const payoutConfigSchema = z.object({
  /** ISO 4217 codes accepted for withdrawals; TRY is the default when a request names none. */
  SUPPORTED_CURRENCIES: envVar.currencies(),
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
});
export type PayoutConfig = z.infer<typeof payoutConfigSchema>;

export interface PayoutContext extends BaseContext {
  config: PayoutConfig;
  bankCatalog: Client<typeof BankCatalogService>;
  merchants: Client<typeof MerchantService>;
  connector: BankConnector;
}

export function loadPayoutConfig(env: Env): PayoutConfig {
  return loadConfig(payoutConfigSchema, env);
}
