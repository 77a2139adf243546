import test from "ava";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CreateDepositRequestSchema, type CreateDepositRequest, DepositService, DepositStatus, DepositStatusChangedSchema, TransferStatus, type DepositStatusChanged } from "@payments/contracts/deposit";
import { MerchantService, UnderpaymentRule } from "@payments/contracts/merchant";
import { deriveDatabaseUrl, errorInfo, type RunningServices, type Subscription } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, rejectionOf, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { DepositContext } from "../src/context.js";
import { expireDueDeposits } from "../src/expiry.js";
import { depositModule } from "../src/index.js";

// The deposit service on MySQL and JetStream, next to the merchant and bank-catalog
// services, plus a second deposit replica on the same database. The clock is manual:
// nothing expires until a test moves it, and every test checks only its own deposits.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const MASTER_KEY = "ab".repeat(32);
const TTL_MS = 30 * 60_000;
let running: RunningServices | undefined;
let replica: RunningServices | undefined;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;
let catalog: ReturnType<typeof createServiceClient<typeof BankCatalogService>>;
let consumer: Subscription | undefined;
const published: DepositStatusChanged[] = [];
const publishedIds: string[] = [];

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "warn", MASTER_KEY, DEPOSIT_EXPIRY_INTERVAL: "100ms", ...nats, ...TEST_OPERATOR_ENV };
  running = await startInProcess(["merchant", "bank-catalog", depositModule], { clock, env: { ...common, DATABASE_URL: database.url } });
  replica = await startServices([depositModule], {
    mode: "split",
    clock,
    env: { ...TEST_OPERATOR_ENV,
      ...common,
      DATABASE_URL: deriveDatabaseUrl(database.url, "deposit"),
      MERCHANT_SERVICE_URL: running.server.url,
      BANK_CATALOG_SERVICE_URL: running.server.url,
    },
  });
  deposits = createServiceClient(DepositService, running.server.url);
  merchants = createServiceClient(MerchantService, running.server.url);
  catalog = createServiceClient(BankCatalogService, running.server.url);
  await addTestReceivingAccounts(catalog);
  consumer = await running.bus.consume("deposit-test", ["deposit.v1.>"], async (message) => {
    publishedIds.push(message.msgId);
    published.push(fromBinary(DepositStatusChangedSchema, message.data));
  });
});

test.after.always(async () => {
  await consumer?.stop();
  await replica?.stop();
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

function depositContext(services: RunningServices): DepositContext {
  return services.contexts.get("deposit") as DepositContext;
}

async function newMerchant(sandbox = true): Promise<string> {
  const { merchant } = await merchants.createMerchant({ name: "Test Shop", sandbox });
  return merchant!.id;
}

type CreateRequest = Exclude<MessageInitShape<typeof CreateDepositRequestSchema>, CreateDepositRequest>;

let sequence = 0;
function depositRequest(merchantId: string, extra: Partial<CreateRequest> = {}): CreateRequest {
  return { merchantId, processId: `order-${++sequence}`, amount: 50_000n, customer: { id: "cus_1", name: "Ayşe Yılmaz", username: "ayse" }, ...extra };
}

/** The outbox events recorded for one deposit, decoded. */
async function outboxEvents(depositId: string): Promise<DepositStatusChanged[]> {
  const rows = (await depositContext(running!).db("outbox").select("payload").orderBy("seq")) as Array<{ payload: Buffer }>;
  return rows.map((r) => fromBinary(DepositStatusChangedSchema, new Uint8Array(r.payload))).filter((e) => e.deposit?.id === depositId);
}

test.serial("a created deposit is pending, with an assigned account, a reference, a checkout token and an expiry DEPOSIT_TTL away, and publishes nothing", async (t) => {
  const merchantId = await newMerchant();
  const { deposit } = await deposits.createDeposit(depositRequest(merchantId, { metadataJson: '{"cart":42}' }));
  t.like(deposit, { merchantId, amount: 50_000n, requestedAmount: 50_000n, currency: "TRY", status: DepositStatus.PENDING, sequence: 1n, sandbox: true, metadataJson: '{"cart":42}' });
  t.regex(deposit!.id, /^dep_[A-Za-z0-9_-]{22}$/);
  t.regex(deposit!.reference, /^[2-9A-HJKMNP-Z]{8}$/);
  t.true(deposit!.checkoutToken.length >= 32, "at least 128 bits, base64url");
  t.truthy(deposit!.assignedAccount?.iban);
  t.is(Number(deposit!.expiresAt!.seconds) * 1000 - Number(deposit!.createdAt!.seconds) * 1000, TTL_MS);
  t.deepEqual(await outboxEvents(deposit!.id), []);
});

test.serial("twenty concurrent creations with one processId: exactly one deposit, nineteen DUPLICATE_TRANSACTION naming it", async (t) => {
  const merchantId = await newMerchant();
  const request = depositRequest(merchantId);
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => deposits.createDeposit(request)));
  const created = results.filter((r) => r.status === "fulfilled");
  t.is(created.length, 1);
  const winner = created[0]!.value.deposit!.id;
  for (const r of results.filter((r) => r.status === "rejected")) {
    t.like(errorInfo(r.reason), { code: Code.AlreadyExists, reason: "DUPLICATE_TRANSACTION", details: { transactionId: winner } });
  }
  const rows = await depositContext(running!).db("deposits").where({ merchant_id: merchantId });
  t.is(rows.length, 1);
  // Another merchant's processId space is its own.
  const other = await deposits.createDeposit({ ...request, merchantId: await newMerchant() });
  t.is(other.deposit?.processId, request.processId);
});

test.serial("an amount outside the chosen bank's limits is AMOUNT_OUT_OF_RANGE stating the bank's range and currency", async (t) => {
  const merchantId = await newMerchant();
  const { banks } = await catalog.listAvailableBanks({ merchantId });
  const bank = banks.find((b) => b.name === "Akbank")!;
  await catalog.setMerchantLimit({ limit: { merchantId, bankId: bank.id, minAmount: 2_000n, maxAmount: 90_000n } });
  const high = await rejectionOf(deposits.createDeposit(depositRequest(merchantId, { bankId: bank.id, amount: 90_001n })));
  t.like(high, { reason: "AMOUNT_OUT_OF_RANGE", field: "amount", details: { minAmount: "2000", maxAmount: "90000", currency: "TRY", bankCode: bank.id } });
  t.is(high.message, "amount 90001 (900.01 TRY) is outside the limits of Akbank: 2000 to 90000 (20.00 to 900.00 TRY), in the smallest currency unit");
  t.like(await rejectionOf(deposits.createDeposit(depositRequest(merchantId, { bankId: bank.id, amount: 1_999n }))), { reason: "AMOUNT_OUT_OF_RANGE" });
  const edge = await deposits.createDeposit(depositRequest(merchantId, { bankId: bank.id, amount: 90_000n }));
  t.is(edge.deposit?.assignedAccount?.bankName, "Akbank");
  t.is(edge.deposit?.bankId, bank.id);
});

test.serial("bad input is VALIDATION_ERROR naming the proto field, and nothing is stored", async (t) => {
  const merchantId = await newMerchant();
  const cases: Array<[string, CreateRequest]> = [
    ["process_id", depositRequest(merchantId, { processId: "" })],
    ["process_id", depositRequest(merchantId, { processId: "x".repeat(51) })],
    // MariaDB would find "order-1 " equal to "order-1"; SQLite would not.
    ["process_id", depositRequest(merchantId, { processId: "order-1 " })],
    ["process_id", depositRequest(merchantId, { processId: "   " })],
    ["amount", depositRequest(merchantId, { amount: 0n })],
    ["amount", depositRequest(merchantId, { amount: -5n })],
    ["amount", depositRequest(merchantId, { amount: BigInt(Number.MAX_SAFE_INTEGER) + 1n })],
    ["currency", depositRequest(merchantId, { currency: "USD" })],
    ["bank_id", depositRequest(merchantId, { bankId: "bnk_unknown" })],
    ["customer", { merchantId, processId: "no-customer", amount: 50_000n }],
    ["customer.name", depositRequest(merchantId, { customer: { id: "c", name: "   ", username: "u" } })],
    ["metadata_json", depositRequest(merchantId, { metadataJson: "[1,2]" })],
    ["merchant_id", depositRequest("mch_does_not_exist")],
    ["return_url", depositRequest(merchantId, { returnUrl: "javascript:alert(1)" })],
    ["return_url", depositRequest(merchantId, { returnUrl: "data:text/html,<b>x</b>" })],
    ["return_url", depositRequest(merchantId, { returnUrl: "/orders/1" })],
    ["return_url", depositRequest(merchantId, { returnUrl: "https://user:secret@shop.example/" })],
    ["return_url", depositRequest(merchantId, { returnUrl: `https://shop.example/${"a".repeat(2000)}` })],
  ];
  for (const [field, request] of cases) {
    const info = await rejectionOf(deposits.createDeposit(request));
    t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field }, JSON.stringify(request, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v)));
    t.true(info.message.startsWith(`${field}: `), info.message);
  }
  t.is((await depositContext(running!).db("deposits").where({ merchant_id: merchantId })).length, 0);
});

test.serial("under the default rules a short payment waits in review attached to its deposit, in suspense, and the deposit stays pending", async (t) => {
  const merchantId = await newMerchant();
  const { deposit } = await deposits.createDeposit(depositRequest(merchantId, { amount: 75_000n }));
  const report = await deposits.reportTransfer({
    iban: deposit!.assignedAccount!.iban,
    amount: 74_500n,
    senderName: "AYSE YILMAZ",
    reference: `odeme ${deposit!.reference}`,
    bankTransactionId: `BTX-short-${deposit!.id}`,
  });
  t.is(report.deposit, undefined);
  t.like(report.transfer, { status: TransferStatus.REVIEW, reviewDepositId: deposit!.id, depositId: "" });
  t.regex(report.transfer!.unmatchedReason, /^underpayment/);
  t.deepEqual(report.transfer!.matchReasons.slice(0, 1), ["reference exact"]);
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit!.id } })).deposit?.status, DepositStatus.PENDING);
  const held = await depositContext(running!).db("suspense_entries").where({ transfer_id: report.transfer!.id }).sum({ amount: "amount" }).first();
  t.is(Number((held as { amount: number }).amount), 74_500);
});

test.serial("a transfer carrying the reference completes the deposit with the amount received; reported again it changes nothing", async (t) => {
  const merchantId = await newMerchant();
  // The merchant completes short payments (the default would hold it for review).
  await merchants.setPaymentRules({ merchantId, underpayment: UnderpaymentRule.COMPLETE });
  const { deposit } = await deposits.createDeposit(depositRequest(merchantId, { amount: 75_000n }));
  const iban = deposit!.assignedAccount!.iban;
  const report = {
    iban: iban.replace(/(.{4})/g, "$1 ").toLowerCase(),
    amount: 74_500n,
    senderName: "AYSE YILMAZ",
    reference: `odeme ${deposit!.reference.toLowerCase()}`,
    bankTransactionId: `BTX-${deposit!.id}`,
  };
  const first = await deposits.reportTransfer(report);
  t.false(first.duplicate);
  t.like(first.deposit, { id: deposit!.id, status: DepositStatus.COMPLETED, amount: 74_500n, requestedAmount: 75_000n, sequence: 2n });
  t.is(first.transfer?.depositId, deposit!.id);
  t.is(first.transfer?.iban, iban);

  const again = await deposits.reportTransfer(report);
  t.true(again.duplicate);
  t.is(again.transfer?.id, first.transfer?.id);
  t.is(again.deposit?.sequence, 2n);
  // Twice at once: still one transfer, one event.
  await Promise.all([deposits.reportTransfer(report), deposits.reportTransfer(report)]);
  const events = await outboxEvents(deposit!.id);
  t.is(events.length, 1);
  t.like(events[0], { previousStatus: DepositStatus.PENDING });
  t.like(events[0]!.deposit, { status: DepositStatus.COMPLETED, amount: 74_500n, sequence: 2n });
  t.is((await depositContext(running!).db("incoming_transfers").where({ deposit_id: deposit!.id })).length, 1);
});

test.serial("a transfer matching no pending deposit is kept unmatched for an operator", async (t) => {
  const merchantId = await newMerchant();
  const { deposit } = await deposits.createDeposit(depositRequest(merchantId, { amount: 61_000n }));
  const report = await deposits.reportTransfer({
    iban: deposit!.assignedAccount!.iban,
    amount: 12_345n,
    senderName: "Unknown Sender",
    reference: "no reference here",
    bankTransactionId: `BTX-unmatched-${deposit!.id}`,
  });
  t.is(report.deposit, undefined);
  t.regex(report.transfer!.unmatchedReason, /no pending deposit of this amount/);
  const { transfers } = await deposits.listUnmatchedTransfers({});
  t.true(transfers.some((tr) => tr.id === report.transfer!.id));
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit!.id } })).deposit?.status, DepositStatus.PENDING);
});

test.serial("an operator settles an unmatched transfer by confirming its deposit with it: linked once, off the unmatched list", async (t) => {
  const merchantId = await newMerchant();
  const [a, b] = await Promise.all([deposits.createDeposit(depositRequest(merchantId, { amount: 40_000n })), deposits.createDeposit(depositRequest(merchantId, { amount: 40_000n }))]);
  // Short paid and no reference: nothing to match it by.
  const report = await deposits.reportTransfer({ iban: a.deposit!.assignedAccount!.iban, amount: 39_017n, senderName: "X", reference: "", bankTransactionId: `BTX-op-${a.deposit!.id}` });
  t.is(report.deposit, undefined);
  const transferId = report.transfer!.id;

  const confirmed = await deposits.confirmDeposit({ depositId: a.deposit!.id, transferId });
  t.like(confirmed.deposit, { status: DepositStatus.COMPLETED, amount: 39_017n, requestedAmount: 40_000n });
  t.false((await deposits.listUnmatchedTransfers({})).transfers.some((tr) => tr.id === transferId));
  const again = await rejectionOf(deposits.confirmDeposit({ depositId: b.deposit!.id, transferId }));
  t.like(again, { code: Code.FailedPrecondition, reason: "TRANSFER_ALREADY_MATCHED", details: { depositId: a.deposit!.id } });
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: b.deposit!.id } })).deposit?.status, DepositStatus.PENDING);
  t.like(await rejectionOf(deposits.confirmDeposit({ depositId: b.deposit!.id, transferId: "trf_missing" })), { reason: "VALIDATION_ERROR", field: "transfer_id" });
});

test.serial("confirm racing expiry: each deposit ends in exactly one final state with exactly one event", async (t) => {
  const merchantId = await newMerchant();
  const created = await Promise.all(Array.from({ length: 20 }, () => deposits.createDeposit(depositRequest(merchantId))));
  const ids = created.map((c) => c.deposit!.id);
  clock.advance(TTL_MS + 1);
  const confirmations = await Promise.allSettled([
    ...ids.map((id) => deposits.confirmDeposit({ depositId: id })),
    expireDueDeposits(depositContext(running!)),
    expireDueDeposits(depositContext(replica!)),
  ]);
  for (const [i, id] of ids.entries()) {
    const { deposit } = await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: id } });
    const outcome = confirmations[i]!;
    if (outcome.status === "fulfilled") t.is(deposit?.status, DepositStatus.COMPLETED);
    else {
      t.like(errorInfo(outcome.reason), { reason: "INVALID_TRANSACTION_STATE", details: { status: "expired" } });
      t.is(deposit?.status, DepositStatus.EXPIRED);
    }
    t.is(deposit?.sequence, 2n);
    const events = await outboxEvents(id);
    t.is(events.length, 1, id);
    t.is(events[0]?.deposit?.status, deposit?.status);
  }
});

test.serial("with two replicas running their expiry jobs, every unpaid deposit expires once, within moments of its expiry", async (t) => {
  const merchantId = await newMerchant();
  const created = await Promise.all(Array.from({ length: 30 }, () => deposits.createDeposit(depositRequest(merchantId))));
  const ids = created.map((c) => c.deposit!.id);
  clock.advance(TTL_MS - 1);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is((await depositContext(running!).db("deposits").whereIn("id", ids).where({ status: "pending" })).length, 30, "not before expiresAt");
  clock.advance(1);
  await eventually(async () => (await depositContext(running!).db("deposits").whereIn("id", ids).where({ status: "expired" })).length === 30, "the jobs to expire all 30");
  for (const id of ids) t.is((await outboxEvents(id)).length, 1, id);
});

test.serial("cancel moves a pending deposit to cancelled once; repeated it returns the deposit unchanged; another merchant cannot", async (t) => {
  const merchantId = await newMerchant();
  const { deposit } = await deposits.createDeposit(depositRequest(merchantId));
  t.like(await rejectionOf(deposits.cancelDeposit({ merchantId: await newMerchant(), depositId: deposit!.id })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
  const first = await deposits.cancelDeposit({ merchantId, depositId: deposit!.id });
  t.like(first.deposit, { status: DepositStatus.CANCELLED, sequence: 2n });
  const second = await deposits.cancelDeposit({ merchantId, depositId: deposit!.id });
  t.like(second.deposit, { status: DepositStatus.CANCELLED, sequence: 2n });
  t.like(await rejectionOf(deposits.confirmDeposit({ depositId: deposit!.id })), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE" });
  t.is((await outboxEvents(deposit!.id)).length, 1);
});

test.serial("reject fails a pending deposit with the operator's reason; confirm takes an optional received amount", async (t) => {
  const merchantId = await newMerchant();
  const [a, b] = await Promise.all([deposits.createDeposit(depositRequest(merchantId)), deposits.createDeposit(depositRequest(merchantId))]);
  const rejected = await deposits.rejectDeposit({ depositId: a.deposit!.id, reason: "sender name does not match the customer" });
  t.like(rejected.deposit, { status: DepositStatus.FAILED, failureReason: "sender name does not match the customer" });
  t.truthy(rejected.deposit?.completedAt);
  const confirmed = await deposits.confirmDeposit({ depositId: b.deposit!.id, amount: 49_000n });
  t.like(confirmed.deposit, { status: DepositStatus.COMPLETED, amount: 49_000n, requestedAmount: 50_000n });
  t.like(await rejectionOf(deposits.rejectDeposit({ depositId: b.deposit!.id, reason: "" })), { reason: "VALIDATION_ERROR", field: "reason" });
});

test.serial("a checkout token opens its deposit; simulate payment completes a sandbox deposit and is refused to a live merchant", async (t) => {
  const sandbox = await newMerchant(true);
  const live = await newMerchant(false);
  const { deposit } = await deposits.createDeposit(depositRequest(sandbox));
  const checkout = await deposits.getCheckout({ token: deposit!.checkoutToken });
  t.is(checkout.deposit?.id, deposit!.id);
  t.true(checkout.sandbox);
  const tampered = deposit!.checkoutToken.slice(0, -1) + (deposit!.checkoutToken.endsWith("A") ? "B" : "A");
  t.like(await rejectionOf(deposits.getCheckout({ token: tampered })), { code: Code.NotFound, reason: "CHECKOUT_NOT_FOUND" });
  t.like(await rejectionOf(deposits.getCheckout({ token: "<script>" })), { code: Code.NotFound, reason: "CHECKOUT_NOT_FOUND" });

  const paid = await deposits.simulatePayment({ token: deposit!.checkoutToken });
  t.like(paid.deposit, { status: DepositStatus.COMPLETED, amount: 50_000n });
  // The same path as a bank: the transfer is on record.
  t.is((await depositContext(running!).db("incoming_transfers").where({ deposit_id: deposit!.id })).length, 1);
  t.like(await rejectionOf(deposits.simulatePayment({ token: deposit!.checkoutToken })), { reason: "INVALID_TRANSACTION_STATE" });

  const { deposit: liveDeposit } = await deposits.createDeposit(depositRequest(live));
  t.like(await rejectionOf(deposits.simulatePayment({ token: liveDeposit!.checkoutToken })), { code: Code.PermissionDenied, reason: "SANDBOX_ONLY" });
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: liveDeposit!.id } })).deposit?.status, DepositStatus.PENDING);

  // A merchant with deposits cannot switch kinds (the merchant service refuses); should a
  // switch race a creation, the deposit keeps the kind it was made with: a live deposit
  // stays live when its merchant turns sandbox, and a sandbox deposit cannot be simulated
  // once its merchant is live. The switch is written straight into the merchant's table here,
  // as only such a race could.
  const merchantDb = running!.contexts.get("merchant")!.db;
  await merchantDb("merchants").where({ id: live }).update({ sandbox: true });
  t.like(await rejectionOf(deposits.simulatePayment({ token: liveDeposit!.checkoutToken })), { reason: "SANDBOX_ONLY" });
  const { deposit: before } = await deposits.createDeposit(depositRequest(sandbox));
  await merchantDb("merchants").where({ id: sandbox }).update({ sandbox: false });
  t.like(await rejectionOf(deposits.simulatePayment({ token: before!.checkoutToken })), { reason: "SANDBOX_ONLY" });
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: before!.id } })).deposit?.status, DepositStatus.PENDING);

  // The outcome stays visible for CHECKOUT_KEEP_FINAL (24h), then the link is gone.
  clock.advance(24 * 3600_000 + 1);
  t.like(await rejectionOf(deposits.getCheckout({ token: deposit!.checkoutToken })), { reason: "CHECKOUT_NOT_FOUND" });
});

test.serial("a returnUrl travels with the deposit: stored normalised, in GetDeposit, ListDeposits and its status event; a live merchant's http one is refused", async (t) => {
  const sandbox = await newMerchant(true);
  const { deposit } = await deposits.createDeposit(depositRequest(sandbox, { returnUrl: "https://Shop.Example/return?order=1" }));
  const href = "https://shop.example/return?order=1";
  t.is(deposit!.returnUrl, href);
  t.like(await depositContext(running!).db("deposits").where({ id: deposit!.id }).first(), { return_url: href });
  t.is((await deposits.getDeposit({ merchantId: sandbox, key: { case: "depositId", value: deposit!.id } })).deposit!.returnUrl, href);
  t.is((await deposits.listDeposits({ merchantId: sandbox })).deposits.find((d) => d.id === deposit!.id)?.returnUrl, href);
  await deposits.simulatePayment({ token: deposit!.checkoutToken });
  const [completed] = await outboxEvents(deposit!.id);
  t.is(completed?.deposit?.returnUrl, href, "the event a callback is made from carries it");

  const http = await deposits.createDeposit(depositRequest(sandbox, { returnUrl: "http://localhost:3000/back" }));
  t.is(http.deposit!.returnUrl, "http://localhost:3000/back", "http for a sandbox merchant");
  t.is((await deposits.createDeposit(depositRequest(sandbox))).deposit!.returnUrl, "", "none");

  const live = await newMerchant(false);
  const refused = await rejectionOf(deposits.createDeposit(depositRequest(live, { returnUrl: "http://shop.example/back" })));
  t.like(refused, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "return_url", message: "return_url: must use https (http only for sandbox merchants)" });
  t.is((await depositContext(running!).db("deposits").where({ merchant_id: live })).length, 0, "nothing stored");
  t.is((await deposits.createDeposit(depositRequest(live, { returnUrl: "https://shop.example/back" }))).deposit!.returnUrl, "https://shop.example/back");
});

test.serial("every status change reached JetStream exactly once, under its outbox event id", async (t) => {
  const rows = await depositContext(running!).db("outbox").select<Array<{ event_id: string }>>("event_id");
  t.true(rows.length > 50);
  await eventually(() => rows.every((r) => publishedIds.includes(r.event_id)), "every outbox event on JetStream");
  t.is(new Set(publishedIds).size, publishedIds.length, "no event id delivered twice");
  t.is(publishedIds.length, rows.length);
  t.true(published.every((e) => e.deposit && e.deposit.sequence >= 2n && e.previousStatus === DepositStatus.PENDING));
});
