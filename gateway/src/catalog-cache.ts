import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { BankCatalogService, ListAvailableBanksRequestSchema, ListAvailableBanksResponse } from "@payments/contracts/bank-catalog";
import { dropOnCatalogChange, EventCache, type Clock, type EventBus, type EventCacheStats, type Logger, type Subscription } from "@payments/kit";

export type AvailableBanksLookup = Pick<Client<typeof BankCatalogService>, "listAvailableBanks">;

export interface CatalogCacheOptions {
  bankCatalog: AvailableBanksLookup;
  clock: Clock;
  /** CATALOG_CACHE_TTL: how long an answer is kept when no CatalogChanged drops it first; 0 turns the cache off. */
  ttlMs: number;
  /** Most (merchant, kind) answers kept; past it the least recently used goes. */
  maxEntries?: number;
  logger?: Logger;
}

/**
 * ListAvailableBanks answers per (merchant, kind), so `GET /v1/available-banks` makes no call
 * to the bank catalog while nothing in it changes. Everything is dropped when the catalog
 * announces a change (CatalogChanged: banks, FAST, merchant limits, receiving accounts), and
 * an answer is never older than the TTL in case an event is lost.
 */
export class CatalogCache implements AvailableBanksLookup {
  private readonly cache: EventCache<ListAvailableBanksResponse>;

  constructor(private readonly options: CatalogCacheOptions) {
    this.cache = new EventCache({ clock: options.clock, ttlMs: options.ttlMs, maxEntries: options.maxEntries ?? 10_000, name: "available-banks", logger: options.logger });
  }

  listAvailableBanks(request: MessageInitShape<typeof ListAvailableBanksRequestSchema>): Promise<ListAvailableBanksResponse> {
    const merchantId = request.merchantId ?? "";
    const sandbox = request.sandbox ?? false;
    return this.cache.get(JSON.stringify([merchantId, sandbox]), () => this.options.bankCatalog.listAvailableBanks({ merchantId, sandbox }));
  }

  clear(): void {
    this.cache.clear();
  }

  stats(): EventCacheStats {
    return this.cache.stats();
  }

  /** Drops every answer as CatalogChanged events arrive (and again CATALOG_SETTLE_MS later). */
  watch(bus: EventBus): Promise<Subscription> {
    return dropOnCatalogChange(this.cache, bus);
  }
}
