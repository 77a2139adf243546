import { fromBinary } from "@bufbuild/protobuf";
import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import type { BusMessage, EventBus, Subscription } from "./bus.js";
import type { EventCache } from "./event-cache.js";

/**
 * The merchant a MerchantChanged event is about: none for a creation (nothing is kept about a
 * merchant that did not exist: failed loads are not kept); one without merchant_id counts as
 * unreadable, and the cache drops everything.
 */
export function merchantsChangedBy(message: BusMessage): string[] {
  const { merchantId, change } = fromBinary(MerchantChangedSchema, message.data);
  if (merchantId === "") throw new Error("a MerchantChanged event without merchant_id");
  return change === "created" ? [] : [merchantId];
}

/** Drops a cache's entry for a merchant (keyed by merchant id) when it changes; everything on an event that cannot be read. */
export function dropOnMerchantChange<T>(cache: EventCache<T>, bus: EventBus): Promise<Subscription> {
  return cache.watch(bus, [MERCHANT_CHANGED_TOPIC], { keysOf: merchantsChangedBy });
}
