import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatusChangedSchema, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, manualClock, testMerchantUser, testMerchantVoice, testOperator } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { FEED_SIGNATURE_HEADER, FEED_TIMESTAMP_HEADER, signFeedBody } from "../src/bank-feed/index.js";
import { newDirScanState, scanBankFeedDir } from "../src/bank-feed/dir.js";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";

// Every money move attributable (issue 32), on SQLite: each way a transfer arrives records its
// reporter on the transfer (the calling workload and who is behind it, the push feed, the watched
// directory), and a deposit it completes records that reporter as its completer; a deposit an
// operator confirms records the operator and their workload, maker and approver when a second
// operator approved. The completed event carries the completer to the payout service's credit.
const clock = manualClock(new Date("2026-12-23T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "deposit-attribution-"));
const drop = join(dir, "feed");
const SECRET = "f".repeat(40);
let running: RunningServices | undefined;
let sandboxShop = "";
let liveShop = "";

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    clock,
    env: { DATA_DIR: dir, LOG_LEVEL: "warn", MASTER_KEY: "a7".repeat(32), BANK_FEEDS: `garanti-push:${SECRET}`, APPROVAL_THRESHOLD: "100000" },
    receivingAccounts: true,
  });
  const merchants = createServiceClient(MerchantService, running.server.url);
  sandboxShop = (await merchants.createMerchant({ name: "Attributed Shop", sandbox: true })).merchant!.id;
  liveShop = (await merchants.createMerchant({ name: "Live Attributed Shop", sandbox: false })).merchant!.id;
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => running!.server.url;
const ctx = () => running!.contexts.get("deposit") as DepositContext;

let n = 0;
async function newDeposit(merchantId = sandboxShop, amount = 25_000n): Promise<Deposit> {
  const { deposit } = await createServiceClient(DepositService, url()).createDeposit({ merchantId, processId: `who-${++n}`, amount, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

async function stored(depositId: string): Promise<{ completedBy: string; reportedBy: string }> {
  const deposit = await ctx().db("deposits").where({ id: depositId }).first<{ completed_by: string | null; transfer_id: string | null }>("completed_by", "transfer_id");
  const transfer = deposit.transfer_id ? await ctx().db("incoming_transfers").where({ id: deposit.transfer_id }).first<{ reported_by: string | null }>("reported_by") : undefined;
  return { completedBy: deposit.completed_by ?? "", reportedBy: transfer?.reported_by ?? "" };
}

/** The completer the deposit_completed event in the outbox carries. */
async function completerInEvent(depositId: string): Promise<string | undefined> {
  const rows = await ctx().db("outbox").where({ topic: "deposit.v1.deposit_completed" }).select<Array<{ payload: Uint8Array }>>("payload");
  return rows.map((r) => fromBinary(DepositStatusChangedSchema, new Uint8Array(r.payload)).deposit).find((d) => d?.id === depositId)?.completedBy;
}

test.serial("a bank integration's report: the transfer names the integration, the deposit it completes too, and so does its completed event", async (t) => {
  const deposit = await newDeposit();
  const bank = createServiceClient(DepositService, url(), { operator: null, workload: "bank-integration/test-bank" });
  const res = await bank.reportTransfer({ iban: deposit.assignedAccount!.iban, amount: 25_000n, senderName: "Ayşe Yılmaz", reference: deposit.reference, bankTransactionId: "who-bank-1" });
  const words = "spiffe://payments.local/bank-integration/test-bank";
  t.is(res.transfer!.reportedBy, words);
  t.is(res.deposit!.completedBy, words);
  t.deepEqual(await stored(deposit.id), { completedBy: words, reportedBy: words });
  t.is(await completerInEvent(deposit.id), words, "carried to the payout service's credit");
  // An unmatched transfer names its reporter too.
  const stray = await bank.reportTransfer({ iban: deposit.assignedAccount!.iban, amount: 777n, senderName: "Kimse", reference: "", bankTransactionId: "who-bank-2" });
  t.is(stray.transfer!.reportedBy, words);
  t.is((await createServiceClient(DepositService, url()).getTransfer({ transferId: stray.transfer!.id })).transfer!.reportedBy, words, "GetTransfer shows it");
});

test.serial("an operator's report and an operator's confirmation name the operator and the workload that carried them", async (t) => {
  const reported = await newDeposit();
  const operator = createServiceClient(DepositService, url(), { operator: testOperator("operator", "Ayse@Ops.Example") });
  const res = await operator.reportTransfer({ iban: reported.assignedAccount!.iban, amount: 25_000n, senderName: "Ayşe Yılmaz", reference: reported.reference, bankTransactionId: "who-op-1" });
  t.is(res.deposit!.completedBy, "ayse@ops.example via spiffe://payments.local/console", "the verified subject, case-folded");

  const confirmed = await newDeposit();
  const done = await createServiceClient(DepositService, url(), { operator: testOperator("operator", "mehmet@ops.example"), workload: "cli" }).confirmDeposit({ depositId: confirmed.id });
  t.is(done.deposit!.completedBy, "mehmet@ops.example via spiffe://payments.local/cli");
  t.is((await stored(confirmed.id)).completedBy, "mehmet@ops.example via spiffe://payments.local/cli");
  t.is(await completerInEvent(confirmed.id), "mehmet@ops.example via spiffe://payments.local/cli");
});

test.serial("a live confirmation above APPROVAL_THRESHOLD names the maker and the approver", async (t) => {
  const deposit = await newDeposit(liveShop, 200_000n);
  const maker = createServiceClient(DepositService, url(), { operator: testOperator("operator", "maker@ops.example"), approver: testOperator("operator", "checker@ops.example") });
  const done = await maker.confirmDeposit({ depositId: deposit.id });
  t.is(done.deposit!.completedBy, "maker@ops.example, approved by checker@ops.example via spiffe://payments.local/console");
  t.is((await stored(deposit.id)).completedBy, "maker@ops.example, approved by checker@ops.example via spiffe://payments.local/console");
});

test.serial("a statement a bank integration imports, the signed push feed and the watched directory each name themselves on the transfer and the deposit", async (t) => {
  const accounts = (await createServiceClient(BankCatalogService, url()).listReceivingAccounts({ sandbox: true })).accounts;
  const imported = await newDeposit(sandboxShop, 12_000n);
  const iban = imported.assignedAccount!.iban;
  const sta = [`:20:WHO1`, `:25:${iban}`, ":28C:00001/001", ":60F:C261223TRY0,00", ":61:2612231223C120,00NTRFNONREF//WHO-STA-1", `:86:GELEN EFT AYSE YILMAZ ${imported.reference}`, ":62F:C261223TRY120,00", "-"].join("\n");
  const bank = createServiceClient(DepositService, url(), { operator: null, workload: "bank-integration/test-bank" });
  await bank.importStatement({ format: "mt940", content: new TextEncoder().encode(sta), fileName: "garanti-1223.sta" });
  t.deepEqual(await stored(imported.id), {
    completedBy: "spiffe://payments.local/bank-integration/test-bank, statement garanti-1223.sta",
    reportedBy: "spiffe://payments.local/bank-integration/test-bank, statement garanti-1223.sta",
  });

  const pushed = await newDeposit(sandboxShop, 13_000n);
  const raw = JSON.stringify({
    transfers: [{ receivingIban: pushed.assignedAccount!.iban, amount: 13_000, currency: "TRY", valueDate: "2026-12-23", senderName: "Ayşe Yılmaz", description: pushed.reference, bankTransactionId: "WHO-PUSH-1" }],
  });
  const timestamp = Math.floor(clock.now().getTime() / 1000);
  const res = await fetch(`${url()}/internal/bank-feed/garanti-push`, {
    method: "POST",
    headers: { "content-type": "application/json", [FEED_TIMESTAMP_HEADER]: String(timestamp), [FEED_SIGNATURE_HEADER]: signFeedBody({ secret: SECRET, timestamp, rawBody: raw }) },
    body: raw,
  });
  t.is(res.status, 200, await res.text());
  t.is((await stored(pushed.id)).completedBy, "bank feed garanti-push (signed push to /internal/bank-feed/garanti-push)");

  const dropped = await newDeposit(sandboxShop, 14_000n);
  const file = join(drop, "isbank-1223.sta");
  const dropIban = dropped.assignedAccount!.iban;
  t.true(accounts.some((a) => a.iban === dropIban));
  const content = [`:20:WHO2`, `:25:${dropIban}`, ":28C:00001/001", ":60F:C261223TRY0,00", ":61:2612231223C140,00NTRFNONREF//WHO-DIR-1", `:86:GELEN EFT AYSE YILMAZ ${dropped.reference}`, ":62F:C261223TRY140,00", "-"].join("\n");
  mkdirSync(drop, { recursive: true });
  writeFileSync(file, content);
  utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  const counts = await scanBankFeedDir(ctx(), drop, newDirScanState(), 0);
  t.is(counts.files, 1);
  t.is((await stored(dropped.id)).completedBy, `bank feed directory ${drop}, statement isbank-1223.sta`);
});

test.serial("the sandbox helpers name the merchant's API key or user, and the checkout's simulate payment its page", async (t) => {
  const viaKey = await newDeposit();
  const key = createServiceClient(DepositService, url(), { operator: null, merchant: testMerchantVoice(sandboxShop, { keyId: "pk_test_ci" }) });
  const paid = await key.sandboxPayDeposit({ merchantId: sandboxShop, depositId: viaKey.id });
  t.is(paid.deposit!.completedBy, `sandbox pay helper: API key pk_test_ci of ${sandboxShop} via spiffe://payments.local/gateway`);
  t.is(paid.transfer!.reportedBy, paid.deposit!.completedBy);

  const viaUser = await newDeposit();
  const user = createServiceClient(DepositService, url(), { operator: testMerchantUser(sandboxShop, "developer", "dev@shop.example"), approver: null });
  const byUser = await user.sandboxPayDeposit({ depositId: viaUser.id });
  t.is(byUser.deposit!.completedBy, `sandbox pay helper: dev@shop.example of ${sandboxShop} via spiffe://payments.local/console`);

  const viaCheckout = await newDeposit();
  const simulated = await createServiceClient(DepositService, url(), { operator: null }).simulatePayment({ token: viaCheckout.checkoutToken });
  t.is(simulated.deposit!.completedBy, 'checkout "simulate payment" via spiffe://payments.local/gateway');
});
