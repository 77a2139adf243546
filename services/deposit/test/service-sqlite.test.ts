import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, manualClock, rejectionOf } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";

// The embedded mode of `pnpm start`: SQLite files and the in-process bus.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "deposit-sqlite-"));
let running: RunningServices | undefined;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    clock,
    env: { DATA_DIR: dir, LOG_LEVEL: "warn", MASTER_KEY: "cd".repeat(32), DEPOSIT_TTL: "10s" },
    receivingAccounts: true,
  });
  deposits = createServiceClient(DepositService, running.server.url);
  merchants = createServiceClient(MerchantService, running.server.url);
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test.serial("on SQLite a deposit is created, found by id and by processId, and DEPOSIT_TTL sets its expiry", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Lite Shop", sandbox: true });
  const { deposit } = await deposits.createDeposit({ merchantId: merchant!.id, processId: "lite-1", amount: 10_000n, bankId: "FAST", customer: { id: "c", name: "N", username: "u" } });
  t.is(Number(deposit!.expiresAt!.seconds - deposit!.createdAt!.seconds), 10);
  t.is(deposit?.bankId, "FAST");
  const byProcess = await deposits.getDeposit({ merchantId: merchant!.id, key: { case: "processId", value: "lite-1" } });
  t.is(byProcess.deposit?.id, deposit!.id);
  t.like(await rejectionOf(deposits.getDeposit({ key: { case: "processId", value: "lite-1" } })), { reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.like(await rejectionOf(deposits.getDeposit({ merchantId: "mch_other", key: { case: "depositId", value: deposit!.id } })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
  t.like(await rejectionOf(deposits.getDeposit({})), { reason: "VALIDATION_ERROR", field: "deposit_id" });
  t.like(await rejectionOf(deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: "d".repeat(41) } })), { reason: "VALIDATION_ERROR", field: "deposit_id" });
});

test.serial("listing is newest first, pages with an opaque cursor without gaps or repeats, and filters by status and time", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Paging Shop", sandbox: true });
  const merchantId = merchant!.id;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    // Two deposits share each millisecond: the id breaks the tie.
    if (i % 2 === 0) clock.advance(1000);
    const { deposit } = await deposits.createDeposit({ merchantId, processId: `page-${i}`, amount: 10_000n, customer: { id: "c", name: "N", username: "u" } });
    ids.push(deposit!.id);
  }
  const seen: string[] = [];
  let cursor = "";
  let pages = 0;
  do {
    const page = await deposits.listDeposits({ merchantId, limit: 2, cursor });
    seen.push(...page.deposits.map((d) => d.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== "");
  t.is(pages, 3);
  t.deepEqual([...seen].sort(), [...ids].sort());
  const times = (await deposits.listDeposits({ merchantId })).deposits.map((d) => Number(d.createdAt!.seconds));
  t.deepEqual(times, [...times].sort((a, b) => b - a));

  await deposits.cancelDeposit({ merchantId, depositId: ids[0]! });
  const cancelled = await deposits.listDeposits({ merchantId, status: DepositStatus.CANCELLED });
  t.deepEqual(cancelled.deposits.map((d) => d.id), [ids[0]]);
  const first = (await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: ids[0]! } })).deposit!;
  const early = await deposits.listDeposits({ merchantId, createdTo: timestampFromMs(Number(first.createdAt!.seconds) * 1000 + 1) });
  t.true(early.deposits.every((d) => d.createdAt!.seconds <= first.createdAt!.seconds));
  t.like(await rejectionOf(deposits.listDeposits({ merchantId, cursor: "not-a-cursor" })), { reason: "VALIDATION_ERROR", field: "cursor" });
  t.like(await rejectionOf(deposits.listDeposits({ merchantId, limit: 1001 })), { reason: "VALIDATION_ERROR", field: "limit" });
});

test.serial("on SQLite the expiry job expires an unpaid deposit once its DEPOSIT_TTL has passed", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Expiry Shop", sandbox: true });
  const { deposit } = await deposits.createDeposit({ merchantId: merchant!.id, processId: "exp-1", amount: 10_000n, customer: { id: "c", name: "N", username: "u" } });
  clock.advance(10_000);
  const deadline = Date.now() + 5000;
  let status = DepositStatus.PENDING;
  while (status === DepositStatus.PENDING && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = (await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit!.id } })).deposit!.status;
  }
  t.is(status, DepositStatus.EXPIRED);
});

test.serial("every merchant-scoped call needs merchant_id; an operator's view across merchants says so with all_merchants", async (t) => {
  const ids: string[] = [];
  for (const name of ["Scope A", "Scope B"]) {
    const { merchant } = await merchants.createMerchant({ name, sandbox: true });
    const { deposit } = await deposits.createDeposit({ merchantId: merchant!.id, processId: "scope-1", amount: 10_000n, customer: { id: "c", name: "N", username: "u" } });
    ids.push(deposit!.id);
  }
  const id = ids[0]!;
  for (const call of [
    () => deposits.getDeposit({ key: { case: "depositId", value: id } }),
    () => deposits.listDeposits({}),
    () => deposits.cancelDeposit({ depositId: id }),
  ]) {
    t.like(await rejectionOf(call()), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "merchant_id" });
  }
  t.like(await rejectionOf(deposits.listDeposits({ merchantId: "mer_x", allMerchants: true })), { reason: "VALIDATION_ERROR", field: "all_merchants" });
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })).deposit?.status, DepositStatus.PENDING, "nothing was cancelled by the refused call");
  const everyone = (await deposits.listDeposits({ allMerchants: true, limit: 100 })).deposits.map((d) => d.id);
  t.true(ids.every((d) => everyone.includes(d)), "the operator's explicit view lists every merchant's deposits");
});

test.serial("control characters and bidirectional overrides in processId and customer fields are refused and nothing is stored", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Clean Shop", sandbox: true });
  const merchantId = merchant!.id;
  const customer = { id: "c", name: "Ayşe", username: "ayse" };
  const cases: Array<[string, Parameters<typeof deposits.createDeposit>[0]]> = [
    ["process_id", { merchantId, processId: "order\u0000-1", amount: 10_000n, customer }],
    ["process_id", { merchantId, processId: "order\n1", amount: 10_000n, customer }],
    ["process_id", { merchantId, processId: "order\u202E1", amount: 10_000n, customer }],
    ["customer.name", { merchantId, processId: "ok-1", amount: 10_000n, customer: { ...customer, name: "Ayşe\r\nX-Injected: 1" } }],
    ["customer.name", { merchantId, processId: "ok-2", amount: 10_000n, customer: { ...customer, name: "\u2066Ayşe\u2069" } }],
    ["customer.username", { merchantId, processId: "ok-3", amount: 10_000n, customer: { ...customer, username: "ay\u202Ase" } }],
    ["customer.id", { merchantId, processId: "ok-4", amount: 10_000n, customer: { ...customer, id: "c\u0007" } }],
  ];
  for (const [field, request] of cases) {
    t.like(await rejectionOf(deposits.createDeposit(request)), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field }, field);
  }
  t.deepEqual((await deposits.listDeposits({ merchantId })).deposits, []);
});

test.serial("a deposit is taken only when an account of the merchant's kind can be assigned: otherwise BANK_UNAVAILABLE and nothing stored", async (t) => {
  const { merchant: live } = await merchants.createMerchant({ name: "Live Shop", sandbox: false });
  const { merchant: sandbox } = await merchants.createMerchant({ name: "Sandbox Shop", sandbox: true });
  const customer = { id: "c", name: "N", username: "u" };
  // Şekerbank (0059) has no receiving account of either kind in the test pool.
  const sekerbank = (await createServiceClient(BankCatalogService, running!.server.url).listBanks({})).banks.find((b) => b.code === "0059")!.id;
  for (const merchantId of [live!.id, sandbox!.id]) {
    const refused = await rejectionOf(deposits.createDeposit({ merchantId, processId: "none-1", amount: 10_000n, bankId: sekerbank, customer }));
    t.like(refused, { code: Code.FailedPrecondition, reason: "BANK_UNAVAILABLE", field: "bank_id", message: "no receiving account is available for this bank" });
    t.deepEqual((await deposits.listDeposits({ merchantId })).deposits, [], "nothing stored");
  }
  const { deposit: liveDeposit } = await deposits.createDeposit({ merchantId: live!.id, processId: "kind-1", amount: 10_000n, customer });
  const { deposit: sandboxDeposit } = await deposits.createDeposit({ merchantId: sandbox!.id, processId: "kind-1", amount: 10_000n, customer });
  const catalog = createServiceClient(BankCatalogService, running!.server.url);
  const kindOf = async (iban: string) => (await catalog.listReceivingAccounts({})).accounts.find((a) => a.iban === iban)?.sandbox;
  t.false(await kindOf(liveDeposit!.assignedAccount!.iban), "a live merchant's customer pays into a live account");
  t.true(await kindOf(sandboxDeposit!.assignedAccount!.iban), "a sandbox merchant's customer pays into a sandbox account");
  t.false(liveDeposit!.sandbox);
  t.true(sandboxDeposit!.sandbox);
});

test.serial("deposits take a bank's candidate accounts in turn, so pending deposits spread evenly over them", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Spread Shop", sandbox: true });
  const catalog = createServiceClient(BankCatalogService, running!.server.url);
  const akbank = (await catalog.listBanks({})).banks.find((b) => b.code === "0046")!.id;
  const ibans = (await catalog.listReceivingAccounts({ bankId: akbank, sandbox: true })).accounts.filter((a) => a.active).map((a) => a.iban);
  t.is(ibans.length, 2);
  const counts = new Map<string, number>();
  for (let i = 0; i < 10; i++) {
    const { deposit } = await deposits.createDeposit({ merchantId: merchant!.id, processId: `spread-${i}`, amount: 10_000n, bankId: akbank, customer: { id: "c", name: "N", username: "u" } });
    const iban = deposit!.assignedAccount!.iban;
    counts.set(iban, (counts.get(iban) ?? 0) + 1);
  }
  t.deepEqual([...counts.values()], [5, 5]);
  t.deepEqual([...counts.keys()].sort(), [...ibans].sort());
});

test.serial("on SQLite a returnUrl is stored normalised and answered by CreateDeposit, GetDeposit, ListDeposits and GetCheckout; none is empty", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Return Shop", sandbox: true });
  const merchantId = merchant!.id;
  const customer = { id: "c", name: "N", username: "u" };
  const { deposit } = await deposits.createDeposit({ merchantId, processId: "ret-1", amount: 10_000n, customer, returnUrl: " HTTPS://Shop.Example/return?order=ret-1 " });
  const href = "https://shop.example/return?order=ret-1";
  t.is(deposit!.returnUrl, href);
  t.is((await deposits.getDeposit({ merchantId, key: { case: "depositId", value: deposit!.id } })).deposit!.returnUrl, href);
  t.is((await deposits.listDeposits({ merchantId })).deposits.find((d) => d.id === deposit!.id)?.returnUrl, href);
  t.is((await deposits.getCheckout({ token: deposit!.checkoutToken })).deposit!.returnUrl, href);

  const sandboxHttp = await deposits.createDeposit({ merchantId, processId: "ret-2", amount: 10_000n, customer, returnUrl: "http://localhost:3000/back" });
  t.is(sandboxHttp.deposit!.returnUrl, "http://localhost:3000/back", "http for a sandbox merchant");
  const none = await deposits.createDeposit({ merchantId, processId: "ret-3", amount: 10_000n, customer });
  t.is(none.deposit!.returnUrl, "");
  t.is((await deposits.getDeposit({ merchantId, key: { case: "depositId", value: none.deposit!.id } })).deposit!.returnUrl, "");
});

test.serial("on SQLite a live merchant's http returnUrl, and javascript:, data: or relative ones, are VALIDATION_ERROR on return_url and store nothing", async (t) => {
  const { merchant: live } = await merchants.createMerchant({ name: "Live Return Shop", sandbox: false });
  const customer = { id: "c", name: "N", username: "u" };
  for (const returnUrl of ["http://shop.example/back", "javascript:alert(1)", "data:text/html,x", "/back", "https://user:pw@shop.example/", "https://shop.example/" + "a".repeat(2000)]) {
    const refused = await rejectionOf(deposits.createDeposit({ merchantId: live!.id, processId: "live-ret", amount: 10_000n, customer, returnUrl }));
    t.like(refused, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "return_url" }, returnUrl);
    t.true(refused.message.startsWith("return_url: "), refused.message);
  }
  t.deepEqual((await deposits.listDeposits({ merchantId: live!.id })).deposits, [], "nothing stored");
  const { deposit } = await deposits.createDeposit({ merchantId: live!.id, processId: "live-ret", amount: 10_000n, customer, returnUrl: "https://shop.example/back" });
  t.is(deposit!.returnUrl, "https://shop.example/back");
});
