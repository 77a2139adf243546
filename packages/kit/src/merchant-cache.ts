import { Code } from "@connectrpc/connect";
import type { EventBus, Subscription } from "./bus.js";
import type { Clock } from "./clock.js";
import { errorInfo, validationError } from "./errors.js";
import { EventCache } from "./event-cache.js";
import type { Logger } from "./logger.js";
import { dropOnMerchantChange } from "./merchant-changes.js";

/**
 * What a service keeps about merchants, asked of the merchant service (GetMerchant,
 * GetCallbackTarget…), by merchant id: kept until the merchant service announces a change to
 * that merchant (MerchantChanged, once watchMerchantChanges runs; a creation drops nothing,
 * an event that cannot be read drops everything) or `ttlMs` passes (MERCHANT_CACHE_TTL, the
 * bound when an event is lost; 0 turns it off: every get asks). Concurrent gets of one
 * merchant share one call; an answer that was in flight when its merchant changed reaches its
 * callers but is not kept; failures are never kept. What to ask and what to keep of the answer
 * is the service's: `get(merchantId, load)`.
 */
export class MerchantCache<V> extends EventCache<V> {
  /** `name` names the cache in logs ("deposit-merchants"). */
  constructor(base: { clock: Clock; logger?: Logger }, ttlMs: number, name: string) {
    super({ clock: base.clock, ttlMs, name, logger: base.logger });
  }

  /** Drops a merchant's entry when it changes; everything on an event that cannot be read. Stop it when the service stops. */
  watchMerchantChanges(bus: EventBus): Promise<Subscription> {
    return dropOnMerchantChange(this, bus);
  }
}

/**
 * The merchant service's NOT_FOUND for `merchantId` as VALIDATION_ERROR on merchant_id (a
 * caller's unknown merchant is its mistake, not this service's failure); any other error as it came.
 */
export function merchantNotFoundAsValidation(err: unknown, merchantId: string): unknown {
  if (errorInfo(err).code === Code.NotFound) return validationError("merchant_id", `merchant_id: merchant ${JSON.stringify(merchantId)} does not exist`);
  return err;
}
