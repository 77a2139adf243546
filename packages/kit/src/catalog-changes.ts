import { CATALOG_CHANGED_TOPIC } from "@payments/contracts";
import type { EventBus, Subscription } from "./bus.js";
import type { EventCache } from "./event-cache.js";

/**
 * A replica of the bank catalog may hear CatalogChanged a moment after this process and answer
 * one more request from its old snapshot: what was loaded in that moment is dropped again
 * this long after the event.
 */
export const CATALOG_SETTLE_MS = 500;

/**
 * Drops everything a cache of the bank catalog's answers keeps when the catalog announces a
 * change (CatalogChanged), and once more CATALOG_SETTLE_MS later.
 */
export function dropOnCatalogChange<T>(cache: EventCache<T>, bus: EventBus): Promise<Subscription> {
  return cache.watch(bus, [CATALOG_CHANGED_TOPIC], { settleMs: CATALOG_SETTLE_MS });
}
