import test from "ava";
import { CATALOG_CHANGED_TOPIC, MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { CATALOG_SETTLE_MS, dropOnCatalogChange, EventCache, InProcessBus } from "../src/index.js";
import { manualClock } from "@payments/testing";

test("dropOnCatalogChange drops everything on CatalogChanged, and again CATALOG_SETTLE_MS later", async (t) => {
  t.is(CATALOG_SETTLE_MS, 500);
  const bus = new InProcessBus();
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  const subscription = await dropOnCatalogChange(cache, bus);
  await cache.get("a", async () => "old");
  await bus.publish(MERCHANT_CHANGED_TOPIC, new Uint8Array(), "other");
  t.is(cache.size, 1, "another topic drops nothing");
  await bus.publish(CATALOG_CHANGED_TOPIC, new Uint8Array(), "c1");
  t.is(cache.size, 0);
  await cache.get("a", async () => "from a replica that has not heard it yet");
  await new Promise((resolve) => setTimeout(resolve, CATALOG_SETTLE_MS + 100));
  t.is(await cache.get("a", async () => "fresh"), "fresh");
  await subscription.stop();
});
