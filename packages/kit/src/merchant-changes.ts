import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { merchantsChangedBy } from "@payments/contracts/merchant";
import type { EventBus, Subscription } from "./bus.js";
import type { EventCache } from "./event-cache.js";

/**
 * Drops a cache's entry for a merchant (keyed by merchant id) when it changes; everything on an
 * event that cannot be read. What a MerchantChanged event means is the merchant contract's
 * (merchantsChangedBy, @payments/contracts/merchant); this only wires it to a cache.
 */
export function dropOnMerchantChange<T>(cache: EventCache<T>, bus: EventBus): Promise<Subscription> {
  return cache.watch(bus, [MERCHANT_CHANGED_TOPIC], { keysOf: merchantsChangedBy });
}
