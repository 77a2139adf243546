import test from "ava";
import { create } from "@bufbuild/protobuf";
import { CATALOG_CHANGED_TOPIC } from "@payments/contracts";
import { ListAvailableBanksResponseSchema, type ListAvailableBanksResponse } from "@payments/contracts/bank-catalog";
import { InProcessBus } from "@payments/kit";
import { manualClock } from "@payments/testing";
import { CatalogCache, type AvailableBanksLookup } from "../src/catalog-cache.js";

/** A bank catalog that answers with the bank names it holds now, counting the calls. */
function fakeCatalog() {
  const calls: Array<{ merchantId: string; sandbox: boolean }> = [];
  let names = ["Akbank"];
  const lookup: AvailableBanksLookup = {
    listAvailableBanks: async (req): Promise<ListAvailableBanksResponse> => {
      calls.push({ merchantId: req.merchantId ?? "", sandbox: req.sandbox ?? false });
      return create(ListAvailableBanksResponseSchema, { banks: names.map((name) => ({ id: `bnk_${name}`, name, code: name, minAmount: 1n, maxAmount: 2n })) });
    },
  };
  return { lookup, calls, setNames: (next: string[]) => (names = next) };
}

const names = (res: ListAvailableBanksResponse) => res.banks.map((b) => b.name);

test("a merchant's bank list is asked for once per (merchant, kind) and then served without a call", async (t) => {
  const catalog = fakeCatalog();
  const cache = new CatalogCache({ bankCatalog: catalog.lookup, clock: manualClock(), ttlMs: 30_000 });
  await cache.listAvailableBanks({ merchantId: "m1", sandbox: false });
  await cache.listAvailableBanks({ merchantId: "m1", sandbox: false });
  await Promise.all(Array.from({ length: 5 }, () => cache.listAvailableBanks({ merchantId: "m2", sandbox: true })));
  await cache.listAvailableBanks({ merchantId: "m2", sandbox: false });
  t.deepEqual(catalog.calls, [
    { merchantId: "m1", sandbox: false },
    { merchantId: "m2", sandbox: true },
    { merchantId: "m2", sandbox: false },
  ]);
});

test("CatalogChanged on the bus drops every kept list at once", async (t) => {
  const bus = new InProcessBus();
  const catalog = fakeCatalog();
  const cache = new CatalogCache({ bankCatalog: catalog.lookup, clock: manualClock(), ttlMs: 30_000 });
  const subscription = await cache.watch(bus);
  t.deepEqual(names(await cache.listAvailableBanks({ merchantId: "m1", sandbox: false })), ["Akbank"]);
  catalog.setNames(["Garanti"]);
  t.deepEqual(names(await cache.listAvailableBanks({ merchantId: "m1", sandbox: false })), ["Akbank"], "kept until the event");
  await bus.publish(CATALOG_CHANGED_TOPIC, new Uint8Array(), "evt_1");
  t.deepEqual(names(await cache.listAvailableBanks({ merchantId: "m1", sandbox: false })), ["Garanti"]);
  await subscription.stop();
});

test("without an event, CATALOG_CACHE_TTL bounds how old a served list is; 0 asks every time", async (t) => {
  const clock = manualClock();
  const catalog = fakeCatalog();
  const cache = new CatalogCache({ bankCatalog: catalog.lookup, clock, ttlMs: 30_000 });
  await cache.listAvailableBanks({ merchantId: "m1", sandbox: false });
  catalog.setNames(["Garanti"]);
  clock.advance(29_999);
  t.deepEqual(names(await cache.listAvailableBanks({ merchantId: "m1", sandbox: false })), ["Akbank"]);
  clock.advance(1);
  t.deepEqual(names(await cache.listAvailableBanks({ merchantId: "m1", sandbox: false })), ["Garanti"]);

  const uncached = fakeCatalog();
  const off = new CatalogCache({ bankCatalog: uncached.lookup, clock, ttlMs: 0 });
  await off.listAvailableBanks({ merchantId: "m1", sandbox: false });
  await off.listAvailableBanks({ merchantId: "m1", sandbox: false });
  t.is(uncached.calls.length, 2);
});

test("a failing bank catalog is not remembered: the next request asks again", async (t) => {
  let fail = true;
  const cache = new CatalogCache({
    bankCatalog: {
      listAvailableBanks: async () => {
        if (fail) throw new Error("unavailable");
        return create(ListAvailableBanksResponseSchema, {});
      },
    },
    clock: manualClock(),
    ttlMs: 30_000,
  });
  await t.throwsAsync(cache.listAvailableBanks({ merchantId: "m1", sandbox: false }));
  fail = false;
  t.deepEqual((await cache.listAvailableBanks({ merchantId: "m1", sandbox: false })).banks, []);
});
