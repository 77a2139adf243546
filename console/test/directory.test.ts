import test from "ava";
import type { Knex } from "knex";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { manualClock } from "@payments/testing";
import type { ConsoleContext } from "../src/context.js";
import type { SignedIn } from "../src/operator/operator-call.js";
import { DIRECTORY_TTL_MS, merchantSelect, Names, named } from "../src/operator/directory.js";

// The directory of names the operators' pages show (shared/directory.ts), against services faked
// here: how often it asks them (once a minute, once for callers at the same time, again for an id
// made since), and what it shows when a part is missing.

interface Fake {
  merchants: Array<{ id: string; name: string; sandbox: boolean }>;
  catalogDown: boolean;
  calls: { listMerchants: number; listReceivingAccounts: number; listBanks: number };
}

function fakeServices(): { deps: ConsoleContext; who: SignedIn; fake: Fake; clock: ReturnType<typeof manualClock> } {
  const clock = manualClock(new Date("2026-12-07T09:00:00Z"));
  const fake: Fake = { merchants: [], catalogDown: false, calls: { listMerchants: 0, listReceivingAccounts: 0, listBanks: 0 } };
  const merchantClient = {
    async listMerchants(req: { pageSize: number; pageToken: string }) {
      fake.calls.listMerchants += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      // Two to a page: the walk follows the tokens.
      const start = req.pageToken ? Number(req.pageToken) : 0;
      const next = start + 2 < fake.merchants.length ? String(start + 2) : "";
      return { merchants: fake.merchants.slice(start, start + 2), nextPageToken: next };
    },
  };
  const catalogClient = {
    async listReceivingAccounts() {
      fake.calls.listReceivingAccounts += 1;
      if (fake.catalogDown) throw new Error("catalog down");
      return { accounts: [{ id: "acc_1", bankId: "bank_1", bankName: "", accountName: "Ödeme Hesabı", iban: "TR120006400000000000000001", sandbox: false }] };
    },
    async listBanks() {
      fake.calls.listBanks += 1;
      if (fake.catalogDown) throw new Error("catalog down");
      return { banks: [{ id: "bank_1", name: "Türkiye İş Bankası" }] };
    },
  };
  // The console's operators table, empty: a query chain that answers no rows.
  const query: Record<string, unknown> = {};
  Object.assign(query, { orderBy: () => query, limit: () => query, where: () => query, then: (resolve: (rows: unknown[]) => void) => resolve([]) });
  const deps = { clock, db: (() => query) as unknown as Knex } as unknown as ConsoleContext;
  const who = {
    lang: "en",
    client: (service: unknown) => (service === MerchantService ? merchantClient : service === BankCatalogService ? catalogClient : undefined),
  } as unknown as SignedIn;
  return { deps, who, fake, clock };
}

test("one reading serves every page for a minute, walks every page of merchants and names accounts with their bank", async (t) => {
  const { deps, who, fake, clock } = fakeServices();
  fake.merchants = [
    { id: "mer_a", name: "Zeytin Ltd", sandbox: false },
    { id: "mer_b", name: "Çiçek A.Ş.", sandbox: true },
    { id: "mer_c", name: "Ayva", sandbox: false },
  ];
  const names = await Names.of(deps, who);
  t.is(names.merchant("mer_b")?.name, "Çiçek A.Ş.");
  t.is(names.merchant("mer_c")?.name, "Ayva", "the second page of ListMerchants is read too");
  t.deepEqual(
    names.merchants()?.map((m) => m.name),
    ["Ayva", "Çiçek A.Ş.", "Zeytin Ltd"],
    "by name in Turkish order",
  );
  t.like(names.account("TR120006400000000000000001"), { accountName: "Ödeme Hesabı", bankName: "Türkiye İş Bankası", sandbox: false });
  t.is(names.bank("bank_1"), "Türkiye İş Bankası");
  t.is(fake.calls.listMerchants, 2);

  clock.advance(DIRECTORY_TTL_MS - 1000);
  await Names.of(deps, who);
  t.deepEqual(fake.calls, { listMerchants: 2, listReceivingAccounts: 1, listBanks: 1 }, "no call within the minute");
  clock.advance(2000);
  await Names.of(deps, who);
  t.deepEqual(fake.calls, { listMerchants: 4, listReceivingAccounts: 2, listBanks: 2 }, "read again after it");
});

test("pages asking at the same time share one reading", async (t) => {
  const { deps, who, fake } = fakeServices();
  fake.merchants = [{ id: "mer_a", name: "Zeytin Ltd", sandbox: false }];
  const all = await Promise.all([Names.of(deps, who), Names.of(deps, who), Names.of(deps, who)]);
  t.true(all.every((n) => n.merchant("mer_a")?.name === "Zeytin Ltd"));
  t.deepEqual(fake.calls, { listMerchants: 1, listReceivingAccounts: 1, listBanks: 1 });
});

test("a merchant made since the reading is read again once for the page that shows it, and an unknown id does not read again for the same page", async (t) => {
  const { deps, who, fake, clock } = fakeServices();
  fake.merchants = [{ id: "mer_a", name: "Zeytin Ltd", sandbox: false }];
  await Names.of(deps, who);
  fake.merchants.push({ id: "mer_new", name: "Yeni Mağaza", sandbox: true });
  clock.advance(1000);
  const page = await Names.of(deps, who);
  t.is(page.merchant("mer_new"), undefined, "the cached reading does not know it");
  await page.ensure({ merchants: ["mer_a", "mer_new"] });
  t.is(page.merchant("mer_new")?.name, "Yeni Mağaza");
  t.is(fake.calls.listMerchants, 2);
  await page.ensure({ merchants: ["mer_never"] });
  t.is(fake.calls.listMerchants, 2, "the reading began after the page: nothing newer to find");
  await (await Names.of(deps, who)).ensure({ merchants: ["mer_a"] });
  t.is(fake.calls.listMerchants, 2, "known ids read nothing");
});

test("a part the services do not give is left out and asked for again on the next page; the rest is named", async (t) => {
  const { deps, who, fake } = fakeServices();
  fake.merchants = [{ id: "mer_a", name: "Zeytin Ltd", sandbox: false }];
  fake.catalogDown = true;
  const names = await Names.of(deps, who);
  t.is(names.merchant("mer_a")?.name, "Zeytin Ltd");
  t.is(names.account("TR120006400000000000000001"), undefined);
  fake.catalogDown = false;
  const next = await Names.of(deps, who);
  t.is(next.bank("bank_1"), "Türkiye İş Bankası", "not kept a minute while a part is missing");
  t.is(fake.calls.listReceivingAccounts, 2);
});

test("a name is shown with its id beside it, escaped; the id alone when no name is known", (t) => {
  t.is(String(named("A <b>", "mer_1", "/merchants/mer_1")), '<a href="/merchants/mer_1">A &lt;b&gt;</a> <small><code class="id">mer_1</code></small>');
  t.is(String(named(undefined, "mer_1")), '<code class="id">mer_1</code>');
  t.is(String(named("Ayşe", "")), "Ayşe");
});

test("the merchant select: the mode's merchants first, an id not in the list kept chosen, a search field when no list came", async (t) => {
  const { deps, who, fake } = fakeServices();
  fake.merchants = [
    { id: "mer_live", name: "Canlı <Dükkan>", sandbox: false },
    { id: "mer_play", name: "Deneme", sandbox: true },
  ];
  const names = await Names.of(deps, who);
  const sandboxFirst = String(merchantSelect(names, { id: "f", name: "merchant", label: "Merchant", value: "mer_play", lang: "en", sandboxFirst: true }));
  t.regex(sandboxFirst, /<optgroup label="Sandbox merchants"><option value="mer_play" selected>Deneme \(mer_play\)<\/option><\/optgroup><optgroup label="Live merchants"><option value="mer_live">Canlı &lt;Dükkan&gt; \(mer_live\)<\/option>/);
  const stray = String(merchantSelect(names, { id: "f", name: "merchant", label: "Üye işyeri", value: "mer_gone", lang: "tr", sandboxFirst: false }));
  t.true(stray.includes('<option value="">Tüm üye işyerleri</option><option value="mer_gone" selected>mer_gone</option><optgroup label="Canlı üye işyerleri">'));

  const { deps: bare, who: alone } = fakeServices();
  (alone as unknown as { client: () => never }).client = () => {
    throw new Error("no services");
  };
  const none = await Names.of(bare, alone);
  const input = String(merchantSelect(none, { id: "f", name: "merchant", label: "Merchant", value: "mer_x", lang: "en", sandboxFirst: false }));
  t.true(input.includes('<input id="f" name="merchant" type="search" value="mer_x">'));
});
