import type { TestFn } from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import { CATALOG_CHANGED_TOPIC } from "@payments/contracts";
import { BankCatalogService, CatalogChangedSchema } from "@payments/contracts/bank-catalog";
import { isMysql, type Env, type RunningServices, type Subscription } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, eventually, manualClock, rejectionOf, TEST_OPERATOR_ENV } from "@payments/testing";
import type { Knex } from "knex";
import type { BankCatalogContext } from "../src/context.js";
import { bankCatalogModule } from "../src/index.js";
import { seedBankId } from "../src/seed.js";

export interface Backend {
  /** The environment of one split-mode bank-catalog service (database, bus). */
  env(): Promise<Env>;
  /** A second replica of the same deployment (same database and bus), when the backend can run one. */
  replicaEnv?(): Promise<Env>;
  cleanUp(): Promise<void>;
}

const AKBANK = seedBankId("0046");
const GARANTI = seedBankId("0062");
/** A valid Akbank IBAN outside the sandbox plan's numbers. */
const LIVE_AKBANK_IBAN = "TR940004607000000000000001";
const TTL_MS = 30_000;

/**
 * CatalogChanged and the snapshot the reads use, over a real server, registered once per
 * backend (MySQL + JetStream, SQLite + the in-process bus).
 */
export function catalogChangesSuite(test: TestFn, backend: Backend): void {
  const clock = manualClock();
  let running: RunningServices | undefined;
  let replica: RunningServices | undefined;
  let watcher: Subscription | undefined;
  const heard: string[] = [];

  const service = () => {
    if (!running) throw new Error("the service did not start");
    return running;
  };
  const client = () => createServiceClient(BankCatalogService, service().server.url, { clock });
  const context = () => service().contexts.get("bank-catalog") as BankCatalogContext;
  const db = (): Knex => context().db;

  /** The CatalogChanged events in the outbox, oldest first, as `what`. */
  async function recorded(): Promise<string[]> {
    const rows = await db()("outbox").where({ topic: CATALOG_CHANGED_TOPIC }).orderBy("seq").select<Array<{ payload: Buffer }>>("payload");
    return rows.map((row) => fromBinary(CatalogChangedSchema, new Uint8Array(row.payload)).what);
  }

  /** Runs `change` and returns the events it recorded. */
  async function eventsOf(change: () => Promise<unknown>): Promise<string[]> {
    const before = (await recorded()).length;
    await change();
    return (await recorded()).slice(before);
  }

  test.before(async () => {
    // "fatal": one test makes RPCs crash on purpose (the outbox refuses the event).
    const env = { ...(await backend.env()), LOG_LEVEL: "fatal", GRPC_PORT: "0", CATALOG_CACHE_TTL: `${TTL_MS}ms`, ...TEST_OPERATOR_ENV };
    running = await startServices([bankCatalogModule], { mode: "split", env, clock });
    if (backend.replicaEnv) {
      replica = await startServices([bankCatalogModule], { mode: "split", env: { LOG_LEVEL: "warn", ...(await backend.replicaEnv()), GRPC_PORT: "0", ...TEST_OPERATOR_ENV }, clock });
    }
    watcher = await running.bus.watch([CATALOG_CHANGED_TOPIC], async (message) => {
      heard.push(fromBinary(CatalogChangedSchema, message.data).what);
    });
  });

  test.after.always(async () => {
    await watcher?.stop();
    await replica?.stop();
    await running?.stop();
    await backend.cleanUp();
  });

  test.serial("every catalog mutation records exactly one CatalogChanged naming it, and it is published on the bus", async (t) => {
    const catalog = client();
    const merchantId = "mch_events";
    t.deepEqual(await eventsOf(() => catalog.createBank({ name: "Event Bank", code: "EVT1", logoUrl: "", minAmount: 100n, maxAmount: 1000n })), ["bank_created"]);
    const bank = (await catalog.listBanks({})).banks.find((b) => b.code === "EVT1")!;
    t.deepEqual(await eventsOf(() => catalog.updateBank({ bankId: bank.id, active: false })), ["bank_updated"]);
    t.deepEqual(await eventsOf(() => catalog.updateFastSettings({ maxAmount: 9_000_000n })), ["fast_settings_updated"]);
    t.deepEqual(await eventsOf(() => catalog.setMerchantLimit({ limit: { merchantId, bankId: AKBANK, minAmount: 2_000n } })), ["merchant_limit_set"]);
    t.deepEqual(await eventsOf(() => catalog.clearMerchantLimit({ merchantId, bankId: AKBANK })), ["merchant_limit_cleared"]);
    let accountId = "";
    t.deepEqual(
      await eventsOf(async () => {
        accountId = (await catalog.createReceivingAccount({ bankId: AKBANK, accountName: "Live Ödeme", iban: LIVE_AKBANK_IBAN, fastEnabled: false, sandbox: false })).account!.id;
      }),
      ["receiving_account_created"],
    );
    t.deepEqual(await eventsOf(() => catalog.updateReceivingAccount({ accountId, fastEnabled: true })), ["receiving_account_updated"]);
    t.deepEqual(await eventsOf(() => catalog.seedSandboxAccounts({})), ["sandbox_accounts_seeded"]);

    const expected = ["bank_created", "bank_updated", "fast_settings_updated", "merchant_limit_set", "merchant_limit_cleared", "receiving_account_created", "receiving_account_updated", "sandbox_accounts_seeded"];
    await eventually(() => expected.every((what) => heard.includes(what)), "every CatalogChanged on the bus", 5_000);
    t.pass();
  });

  test.serial("a mutation that fails records no event, and one that changes nothing records none either", async (t) => {
    const catalog = client();
    t.deepEqual(await eventsOf(() => rejectionOf(catalog.createBank({ name: "Again", code: "EVT1", logoUrl: "", minAmount: 100n, maxAmount: 1000n }))), [], "BANK_CODE_TAKEN");
    t.deepEqual(await eventsOf(() => rejectionOf(catalog.updateBank({ bankId: AKBANK, minAmount: 9_000_000n }))), [], "min above max, refused inside the transaction");
    t.deepEqual(await eventsOf(() => rejectionOf(catalog.updateBank({ bankId: "bnk_unknown", active: false }))), [], "BANK_NOT_FOUND");
    t.deepEqual(await eventsOf(() => rejectionOf(catalog.updateFastSettings({ minAmount: 99_000_000n }))), [], "FAST min above max");
    t.deepEqual(await eventsOf(() => rejectionOf(catalog.setMerchantLimit({ limit: { merchantId: "m", bankId: "bnk_unknown", enabled: false } }))), []);
    t.deepEqual(
      await eventsOf(() => rejectionOf(catalog.createReceivingAccount({ bankId: AKBANK, accountName: "Twin", iban: LIVE_AKBANK_IBAN, fastEnabled: false, sandbox: false }))),
      [],
      "IBAN_TAKEN",
    );
    t.deepEqual(await eventsOf(() => rejectionOf(catalog.updateReceivingAccount({ accountId: "acc_unknown", active: false }))), [], "ACCOUNT_NOT_FOUND");
    t.deepEqual(await eventsOf(() => catalog.clearMerchantLimit({ merchantId: "mch_none", bankId: AKBANK })), [], "clearing a missing override");
    t.deepEqual(await eventsOf(() => catalog.updateBank({ bankId: AKBANK })), [], "an update naming no field");
    t.deepEqual(await eventsOf(() => catalog.seedSandboxAccounts({})), [], "seeding when nothing is missing");
  });

  test.serial("the event is written in the mutation's transaction: when it cannot be written, the change is rolled back", async (t) => {
    const knex = db();
    const trigger = "outbox_refuse_catalog_changed";
    await knex.raw(
      isMysql(knex)
        ? `CREATE TRIGGER ${trigger} BEFORE INSERT ON outbox FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'outbox refused by the test'`
        : `CREATE TRIGGER ${trigger} BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'outbox refused by the test'); END`,
    );
    try {
      await rejectionOf(client().updateBank({ bankId: GARANTI, name: "Renamed Without Event" }));
      await rejectionOf(client().setMerchantLimit({ limit: { merchantId: "mch_rolled_back", bankId: GARANTI, enabled: false } }));
    } finally {
      await knex.raw(`DROP TRIGGER ${trigger}`);
    }
    const row = await knex("banks").where({ id: GARANTI }).first<{ name: string }>("name");
    t.is(row.name, "Türkiye Garanti Bankası");
    t.is((await knex("merchant_limits").where({ merchant_id: "mch_rolled_back" })).length, 0);
    t.true((await client().listAvailableBanks({ merchantId: "mch_rolled_back", sandbox: true })).banks.some((b) => b.id === GARANTI));
  });

  test.serial("reads come from the snapshot: a change behind the service's back shows only after a CatalogChanged arrives", async (t) => {
    const catalog = client();
    const before = (await catalog.listBanks({})).banks.find((b) => b.id === GARANTI)!.name;
    await db()("banks").where({ id: GARANTI }).update({ name: "Garanti Behind The Back" });
    t.is((await catalog.listBanks({})).banks.find((b) => b.id === GARANTI)!.name, before, "served from the snapshot");
    t.true((await catalog.listAvailableBanks({ merchantId: "mch_snapshot", sandbox: true })).banks.some((b) => b.name === before));
    // Another replica's change, as its event arrives.
    await service().bus.publish(CATALOG_CHANGED_TOPIC, new Uint8Array(), `evt_test_${Date.now()}`);
    await eventually(async () => (await catalog.listBanks({})).banks.some((b) => b.name === "Garanti Behind The Back"), "the snapshot dropped on the event", 1_000);
    const terms = await catalog.getDepositTerms({ merchantId: "mch_snapshot", bankId: GARANTI, sandbox: true });
    t.is(terms.bankName, "Garanti Behind The Back");
    t.true(terms.accounts.every((a) => a.bankName === "Garanti Behind The Back"), "the accounts' bank names come from the same snapshot");
    await db()("banks").where({ id: GARANTI }).update({ name: before });
    await service().bus.publish(CATALOG_CHANGED_TOPIC, new Uint8Array(), `evt_test_${Date.now()}_back`);
    await eventually(async () => (await catalog.listBanks({})).banks.some((b) => b.name === before), "the name restored", 1_000);
  });

  test.serial("without any event, CATALOG_CACHE_TTL bounds how long a snapshot serves", async (t) => {
    const catalog = client();
    await catalog.listBanks({});
    await db()("banks").where({ id: AKBANK }).update({ active: false });
    t.true((await catalog.listAvailableBanks({ merchantId: "mch_ttl", sandbox: true })).banks.some((b) => b.id === AKBANK), "within the TTL: the snapshot");
    clock.advance(TTL_MS - 1);
    t.true((await catalog.listAvailableBanks({ merchantId: "mch_ttl", sandbox: true })).banks.some((b) => b.id === AKBANK), "1 ms before the TTL: still the snapshot");
    clock.advance(1);
    t.false((await catalog.listAvailableBanks({ merchantId: "mch_ttl", sandbox: true })).banks.some((b) => b.id === AKBANK), "at the TTL: read again");
    await db()("banks").where({ id: AKBANK }).update({ active: true });
    clock.advance(TTL_MS);
  });

  test.serial("a change made through this replica is seen by its next read at once, a merchant's own limits included", async (t) => {
    const catalog = client();
    const merchantId = "mch_read_your_writes";
    t.true((await catalog.listAvailableBanks({ merchantId, sandbox: true })).banks.some((b) => b.id === GARANTI));
    await catalog.setMerchantLimit({ limit: { merchantId, bankId: GARANTI, enabled: false } });
    t.false((await catalog.listAvailableBanks({ merchantId, sandbox: true })).banks.some((b) => b.id === GARANTI));
    t.like(await rejectionOf(catalog.getDepositTerms({ merchantId, bankId: GARANTI, sandbox: true })), { reason: "BANK_NOT_AVAILABLE" });
    await catalog.clearMerchantLimit({ merchantId, bankId: GARANTI });
    t.true((await catalog.listAvailableBanks({ merchantId, sandbox: true })).banks.some((b) => b.id === GARANTI));
  });

  test.serial("a change made through one replica reaches another replica's snapshot within 1 s", async (t) => {
    if (!replica) return t.pass("this backend runs one replica");
    const other = createServiceClient(BankCatalogService, replica.server.url, { clock });
    const merchantId = "mch_replicas";
    t.true((await other.listAvailableBanks({ merchantId, sandbox: true })).banks.some((b) => b.id === GARANTI), "the other replica holds a snapshot");
    const started = Date.now();
    await client().updateBank({ bankId: GARANTI, active: false });
    await eventually(async () => !(await other.listAvailableBanks({ merchantId, sandbox: true })).banks.some((b) => b.id === GARANTI), "the other replica to drop Garanti", 1_000);
    t.log(`seen by the other replica after ${Date.now() - started} ms`);
    await client().updateBank({ bankId: GARANTI, active: true });
    await eventually(async () => (await other.listAvailableBanks({ merchantId, sandbox: true })).banks.some((b) => b.id === GARANTI), "Garanti back", 1_000);
    t.pass();
  });
}
