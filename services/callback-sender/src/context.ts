import type { Client } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { envVar, loadConfig, type BaseContext, type Env, type MerchantCache } from "@payments/kit";
import { z } from "zod";
import type { CallbackTarget } from "./callback-target.js";
import type { CallbackPoster } from "./post-callback.js";

/** The callback-sender's own settings, on top of the kit's base settings. */
export const callbackConfigSchema = z
  .object({
    /** The waits before each retry; after the last one fails the event is marked failed. */
    CALLBACK_RETRY_SCHEDULE: envVar.durations("5s,5m,30m,2h,5h,10h,14h,20h,24h").refine((steps) => steps.length >= 1, "needs at least one duration"),
    /** An attempt counts as delivered only on a 2xx status within this time. */
    CALLBACK_TIMEOUT: envVar.duration("10s").refine((v) => v >= 100, "must be at least 100ms"),
    /**
     * How long a claimed attempt may take before another sender takes the event again (the
     * sender died mid-attempt). Longer than CALLBACK_TIMEOUT plus the merchant lookup.
     */
    CALLBACK_CLAIM_TIMEOUT: envVar.duration("30s"),
    /** Allow callback URLs resolving to private, loopback or link-local addresses (development and tests only). */
    CALLBACK_ALLOW_PRIVATE: envVar.flag(false),
    /** Attempts one sender has in flight at once, over all merchants. */
    CALLBACK_CONCURRENCY: envVar.int(50, 1),
    /** Attempts one sender has in flight at once for one merchant, so a slow endpoint cannot hold up the others. */
    CALLBACK_MERCHANT_CONCURRENCY: envVar.int(4, 1),
    /** How often a sender looks for due attempts (new events and freed slots also wake it). */
    CALLBACK_POLL_INTERVAL: envVar.duration("500ms").refine((v) => v >= 10, "must be at least 10ms"),
    /** The longest wait a Retry-After answer can impose before the next attempt. */
    CALLBACK_MAX_RETRY_AFTER: envVar.duration("24h"),
    /**
     * Callbacks of one transaction go in `sequence` order: a change is not sent while an earlier
     * one of the same transaction is still pending. A change whose predecessor has not been
     * taken in yet waits for it at most this long, then goes anyway. The predecessor can be
     * late by the producer's outbox lease (15 s: a relay killed holding it) plus JetStream's
     * redelivery (30 s ack wait: a replica killed holding it), with room to spare.
     */
    CALLBACK_ORDER_WAIT: envVar.duration("2m"),
    /** Whether this process sends callbacks (turn off for API-only replicas; events are still taken in). */
    CALLBACK_SENDER: envVar.flag(true),
    /** How long a merchant's callback URL and signing secret are kept when no MerchantChanged event drops them first (an attempt that fails drops them too); 0: asked before every attempt. */
    MERCHANT_CACHE_TTL: envVar.duration("30s"),
    /** Where customers reach the gateway: a deposit's checkoutUrl in callback bodies starts with it. */
    PUBLIC_BASE_URL: envVar
      .url(["http", "https"])
      .transform((url) => url.replace(/\/+$/, ""))
      .optional(),
    /** The gateway's port, for the default PUBLIC_BASE_URL (http://localhost:PORT), as the gateway derives it. */
    PORT: envVar.port(8080),
  })
  .refine((c) => c.CALLBACK_CLAIM_TIMEOUT > c.CALLBACK_TIMEOUT, {
    path: ["CALLBACK_CLAIM_TIMEOUT"],
    message: "must be longer than CALLBACK_TIMEOUT",
  })
  .transform(({ PORT, PUBLIC_BASE_URL, ...rest }) => ({ ...rest, PUBLIC_BASE_URL: PUBLIC_BASE_URL ?? `http://localhost:${PORT}` }));
export type CallbackConfig = z.infer<typeof callbackConfigSchema>;

export interface CallbackContext extends BaseContext {
  config: CallbackConfig;
  merchants: Client<typeof MerchantService>;
  /** GetCallbackTarget answers by merchant id, dropped on MerchantChanged and after a failed attempt (src/callback-target.ts). */
  callbackTargets: MerchantCache<CallbackTarget>;
  poster: CallbackPoster;
  /** Tells this process's sender to look for due attempts now (after a redelivery); a no-op without one. */
  wakeSender(): void;
}

export function loadCallbackConfig(env: Env): CallbackConfig {
  return loadConfig(callbackConfigSchema, env);
}
