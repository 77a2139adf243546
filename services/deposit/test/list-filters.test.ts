import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus, type Deposit, type ListDepositsRequestSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import type { RunningServices } from "@payments/kit";
import { addTestReceivingAccounts, createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock, rejectionOf, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";

// ListDeposits' search filters (issue 23): reference, customer id, customer name prefix,
// receiving IBAN and amount, each alone, with merchant and status, and through the cursor.
// SQLite for the behaviour; one case on MySQL runs every filter on the real dialect.
const clock = manualClock(new Date("2026-11-29T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "deposit-list-filters-"));
let running: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    clock,
    env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "d5".repeat(32) },
    receivingAccounts: true,
  });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type ListInit = MessageInitShape<typeof ListDepositsRequestSchema>;
let sequence = 0;

async function merchant(url: string, sandbox = true): Promise<string> {
  return (await createServiceClient(MerchantService, url).createMerchant({ name: `Filters Shop ${++sequence}`, sandbox })).merchant!.id;
}

async function deposit(url: string, merchantId: string, amount: bigint, customer: { id: string; name: string }): Promise<Deposit> {
  clock.advance(1000);
  const { deposit } = await createServiceClient(DepositService, url).createDeposit({
    merchantId,
    processId: `filters-${++sequence}`,
    amount,
    customer: { ...customer, username: customer.id },
  });
  return deposit!;
}

/** Every id the listing gives, page by page through the cursor, `limit` at a time. */
async function allIds(url: string, request: ListInit, limit = 100): Promise<string[]> {
  const ids: string[] = [];
  let cursor = "";
  for (;;) {
    const page = await createServiceClient(DepositService, url).listDeposits({ ...request, limit, cursor });
    ids.push(...page.deposits.map((d) => d.id));
    if (page.nextCursor === "") return ids;
    cursor = page.nextCursor;
  }
}

const newestFirst = (...deposits: Deposit[]) => deposits.map((d) => d.id).reverse();

test.serial("each filter alone finds exactly its deposits, newest first, and combines with merchant and status", async (t) => {
  const url = running!.server.url;
  const shop = await merchant(url);
  const other = await merchant(url);
  const a1 = await deposit(url, shop, 10_000n, { id: "cust-a", name: "Ayşe Yılmaz" });
  const b1 = await deposit(url, shop, 25_050n, { id: "cust-b", name: "Ayşegül Demir" });
  const a2 = await deposit(url, shop, 25_050n, { id: "cust-a", name: "Ayşe Yılmaz" });
  const c1 = await deposit(url, shop, 7_500n, { id: "cust-c", name: "ayşe küçük" });
  const o1 = await deposit(url, other, 25_050n, { id: "cust-a", name: "Ayşe Yılmaz" });
  await createServiceClient(DepositService, url).cancelDeposit({ merchantId: shop, depositId: a2.id });

  // The reference in any case and with stray spaces around it.
  t.deepEqual(await allIds(url, { merchantId: shop, reference: ` ${b1.reference.toLowerCase()} ` }), [b1.id]);
  t.deepEqual(await allIds(url, { merchantId: shop, reference: o1.reference }), [], "another merchant's reference is not in this merchant's list");
  t.deepEqual(await allIds(url, { allMerchants: true, reference: o1.reference }), [o1.id]);

  t.deepEqual(await allIds(url, { merchantId: shop, customerId: "cust-a" }), newestFirst(a1, a2));
  t.deepEqual(await allIds(url, { allMerchants: true, customerId: "cust-a" }).then((ids) => ids.filter((id) => [a1.id, a2.id, o1.id].includes(id))), newestFirst(a1, a2, o1));
  t.deepEqual(await allIds(url, { merchantId: shop, customerId: "cust" }), [], "the customer id is exact, not a prefix");

  // A prefix, exact as typed: "Ayşe" finds Ayşe and Ayşegül, not "ayşe küçük".
  t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ayşe" }), newestFirst(a1, b1, a2));
  t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ayşe Y" }), newestFirst(a1, a2));
  t.deepEqual(await allIds(url, { merchantId: shop, customerName: "ayşe" }), [c1.id]);
  t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ay%" }), [], "a wildcard in the prefix is taken literally");
  t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ay_e" }), []);

  t.deepEqual(await allIds(url, { merchantId: shop, amount: 25_050n }), newestFirst(b1, a2));
  t.deepEqual(await allIds(url, { merchantId: shop, amount: 25_050n, status: DepositStatus.PENDING }), [b1.id]);
  t.deepEqual(await allIds(url, { merchantId: shop, amount: 25_050n, status: DepositStatus.CANCELLED }), [a2.id]);
  t.deepEqual(await allIds(url, { merchantId: shop, customerId: "cust-a", amount: 10_000n }), [a1.id]);
  t.deepEqual(await allIds(url, { merchantId: shop, customerId: "cust-a", status: DepositStatus.CANCELLED }), [a2.id]);

  // The receiving IBAN with spaces and in lower case.
  const iban = a1.assignedAccount!.iban;
  const spaced = iban.toLowerCase().replace(/(.{4})/g, "$1 ");
  const onIt = [a1, b1, a2, c1].filter((d) => d.assignedAccount?.iban === iban);
  t.deepEqual(await allIds(url, { merchantId: shop, accountIban: spaced }), newestFirst(...onIt));
  t.deepEqual(await allIds(url, { merchantId: shop, accountIban: iban, customerId: "cust-a", status: DepositStatus.PENDING }), [a1.id]);
});

test.serial("a filtered list pages through the cursor without skipping or repeating, inside the filter", async (t) => {
  const url = running!.server.url;
  const shop = await merchant(url);
  const wanted: Deposit[] = [];
  for (let i = 0; i < 7; i++) {
    wanted.push(await deposit(url, shop, 33_300n, { id: "pager", name: "Mehmet Öz" }));
    await deposit(url, shop, 33_301n, { id: "other", name: "Zeynep Kaya" });
  }
  for (const filter of [{ amount: 33_300n }, { customerId: "pager" }, { customerName: "Meh" }] satisfies ListInit[]) {
    t.deepEqual(await allIds(url, { merchantId: shop, ...filter }, 2), newestFirst(...wanted), JSON.stringify(filter, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)));
  }
});

test.serial("sandbox narrows the list to sandbox or live deposits, alone, with a merchant and other filters, through the cursor; unset gives both", async (t) => {
  const url = running!.server.url;
  const play = await merchant(url, true);
  const real = await merchant(url, false);
  const sandboxed: Deposit[] = [];
  const live: Deposit[] = [];
  for (let i = 0; i < 3; i++) {
    sandboxed.push(await deposit(url, play, 44_400n, { id: "mode", name: "Elif Şahin" }));
    live.push(await deposit(url, real, 44_400n, { id: "mode", name: "Elif Şahin" }));
  }
  t.true(sandboxed.every((d) => d.sandbox) && live.every((d) => !d.sandbox));
  const mine = (ids: string[]) => ids.filter((id) => [...sandboxed, ...live].some((d) => d.id === id));
  // Across merchants, a page of one at a time: neither skips nor repeats inside the mode.
  t.deepEqual(mine(await allIds(url, { allMerchants: true, sandbox: true, amount: 44_400n }, 1)), newestFirst(...sandboxed));
  t.deepEqual(mine(await allIds(url, { allMerchants: true, sandbox: false, amount: 44_400n }, 1)), newestFirst(...live));
  t.deepEqual(mine(await allIds(url, { allMerchants: true, sandbox: false }, 2)), newestFirst(...live), "no other filter");
  t.deepEqual(mine(await allIds(url, { allMerchants: true, amount: 44_400n }, 2)), newestFirst(...sandboxed.flatMap((d, i) => [d, live[i]!])), "unset: both, as before");
  // One merchant's list (its own index), by name (its name index) and with a status.
  t.deepEqual(await allIds(url, { merchantId: play, sandbox: true }, 1), newestFirst(...sandboxed));
  t.deepEqual(await allIds(url, { merchantId: play, sandbox: false }), [], "a sandbox merchant has no live deposits");
  t.deepEqual(await allIds(url, { merchantId: real, sandbox: false, customerName: "Elif" }, 1), newestFirst(...live));
  t.deepEqual(await allIds(url, { merchantId: real, sandbox: true, customerName: "Elif" }), []);
  t.deepEqual(await allIds(url, { merchantId: real, sandbox: false, status: DepositStatus.PENDING, customerId: "mode" }, 2), newestFirst(...live));
});

test.serial("a filter's invalid value is VALIDATION_ERROR naming its field", async (t) => {
  const deposits = createServiceClient(DepositService, running!.server.url);
  const cases: Array<[ListInit, string]> = [
    [{ reference: "AB-12" }, "reference"],
    [{ reference: "A".repeat(17) }, "reference"],
    [{ customerId: "x".repeat(201) }, "customer_id"],
    [{ customerName: "Ayşe\u202E" }, "customer_name"],
    [{ accountIban: "TR00 0000" }, "account_iban"],
    [{ accountIban: "DE89370400440532013000" }, "account_iban"],
    [{ amount: 0n }, "amount"],
    [{ amount: -5n }, "amount"],
  ];
  for (const [filter, field] of cases) {
    t.like(await rejectionOf(deposits.listDeposits({ allMerchants: true, ...filter })), { reason: "VALIDATION_ERROR", field }, field);
  }
});

test.serial("on MySQL (utf8mb4_bin) every filter runs and finds the same deposits", async (t) => {
  const database = await createTestDatabase();
  const nats = jetStreamTestEnv();
  const mysql = await startInProcess(["merchant", "bank-catalog", depositModule], {
    clock,
    env: { LOG_LEVEL: "fatal", MASTER_KEY: "d6".repeat(32), DATABASE_URL: database.url, ...nats, ...TEST_OPERATOR_ENV },
  });
  try {
    const url = mysql.server.url;
    await addTestReceivingAccounts(createServiceClient(BankCatalogService, url));
    const shop = await merchant(url);
    const a1 = await deposit(url, shop, 12_345n, { id: "m-a", name: "Ayşe Yılmaz" });
    const b1 = await deposit(url, shop, 12_345n, { id: "m-b", name: "ayşe_x" });
    const a2 = await deposit(url, shop, 999n, { id: "m-a", name: "Ayşegül" });
    t.deepEqual(await allIds(url, { merchantId: shop, reference: a2.reference.toLowerCase() }), [a2.id]);
    t.deepEqual(await allIds(url, { merchantId: shop, customerId: "m-a", status: DepositStatus.PENDING }), newestFirst(a1, a2));
    t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ayşe" }), newestFirst(a1, a2), "exact case on utf8mb4_bin");
    t.deepEqual(await allIds(url, { merchantId: shop, customerName: "ayşe_" }), [b1.id]);
    t.deepEqual(await allIds(url, { merchantId: shop, customerName: "ayşe%" }), []);
    // Issue 24's index paths, paged one row at a time: a name found through the merchant's name index, and the merchant's own index.
    t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ayşe" }, 1), newestFirst(a1, a2), "by name, paged");
    t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ayşe", status: DepositStatus.PENDING }, 1), newestFirst(a1, a2), "by name and status, paged");
    t.deepEqual(await allIds(url, { merchantId: shop, customerName: "Ayşe", status: DepositStatus.COMPLETED }, 1), []);
    t.deepEqual(await allIds(url, { merchantId: shop, status: DepositStatus.PENDING }, 1), newestFirst(a1, b1, a2), "by status on the merchant's index, paged");
    t.deepEqual(await allIds(url, { merchantId: shop, amount: 12_345n }, 1), newestFirst(a1, b1));
    const iban = a1.assignedAccount!.iban;
    t.deepEqual(await allIds(url, { allMerchants: true, accountIban: iban.toLowerCase(), customerId: "m-a" }), newestFirst(...[a1, a2].filter((d) => d.assignedAccount?.iban === iban)));
    // The sandbox filter on the merchant's forced indexes (its list and its name index), paged.
    t.deepEqual(await allIds(url, { merchantId: shop, sandbox: true }, 1), newestFirst(a1, b1, a2));
    t.deepEqual(await allIds(url, { merchantId: shop, sandbox: true, customerName: "Ayşe" }, 1), newestFirst(a1, a2));
    t.deepEqual(await allIds(url, { merchantId: shop, sandbox: false }), []);
    t.deepEqual(await allIds(url, { allMerchants: true, sandbox: false, customerId: "m-a" }), []);
  } finally {
    await mysql.stop();
    await database.drop();
    await deleteTestStream(nats);
  }
});
