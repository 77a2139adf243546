import { createServiceClient, unusedIban } from "@payments/testing";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { DepositService, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { resolveEndpoints } from "../src/clients.js";
import { cli, closedPort, singleJson } from "./capture.js";

// The deposit and transfer commands in-process against the real merchant, bank-catalog and
// deposit services, all-in-one on SQLite in a temporary directory. Deposits are created with
// the DepositService client (as the gateway does); the CLI then acts as the operator.

interface DepositJson {
  id: string;
  merchantId: string;
  processId: string;
  amount: number;
  requestedAmount: number;
  currency: string;
  status: string;
  reference: string;
  failureReason: string;
  sequence: number;
  assignedAccount?: { iban: string };
  completedAt?: string;
}

interface TransferJson {
  id: string;
  iban: string;
  amount: number;
  senderName: string;
  reference: string;
  bankTransactionId: string;
  depositId: string;
  unmatchedReason: string;
  reportedAt: string;
}

interface ReportJson {
  transfer: TransferJson;
  deposit?: DepositJson;
  duplicate: boolean;
}

let running: RunningServices | undefined;
let dataDir: string;
let url: string;
let merchantId: string;
let otherMerchantId: string;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let processCounter = 0;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-deposit-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" },
    receivingAccounts: true,
  });
  url = running.server.url;
  const merchants = createServiceClient(MerchantService, url);
  deposits = createServiceClient(DepositService, url);
  merchantId = (await merchants.createMerchant({ name: "Deposit Shop", sandbox: true })).merchant!.id;
  otherMerchantId = (await merchants.createMerchant({ name: "Other Shop", sandbox: true })).merchant!.id;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A pending deposit with an assigned account, as the gateway would create it. */
async function createDeposit(amount = 15050n, merchant = merchantId): Promise<Deposit> {
  const n = ++processCounter;
  const res = await deposits.createDeposit({
    merchantId: merchant,
    processId: `order-${n}`,
    amount,
    customer: { id: `cust-${n}`, name: "Ayşe Yılmaz", username: `ayse${n}` },
  });
  const deposit = res.deposit!;
  if (deposit.status !== DepositStatus.PENDING || !deposit.assignedAccount) throw new Error("expected a pending deposit with an assigned account");
  return deposit;
}

async function depositCli(args: readonly string[]) {
  return cli([...args, "--grpc-url", url]);
}

async function showJson(id: string): Promise<DepositJson> {
  const r = await depositCli(["deposit", "show", id, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (singleJson(r.stdout) as { deposit: DepositJson }).deposit;
}

test("resolveEndpoints: --grpc-url > DEPOSIT_SERVICE_URL > GRPC_URL > the default for the deposit service", (t) => {
  t.is(resolveEndpoints({}, {}).deposit, "http://127.0.0.1:9090");
  t.is(resolveEndpoints({}, { GRPC_URL: "http://shared:9090" }).deposit, "http://shared:9090");
  const split = resolveEndpoints({}, { GRPC_URL: "http://shared:9090", DEPOSIT_SERVICE_URL: "http://deposit:9093/" });
  t.is(split.deposit, "http://deposit:9093");
  t.is(split.merchant, "http://shared:9090", "the other services keep GRPC_URL");
  t.is(resolveEndpoints({ grpcUrl: "http://flag:1" }, { DEPOSIT_SERVICE_URL: "http://deposit:9093" }).deposit, "http://flag:1");
});

test("the deposit commands call the service at DEPOSIT_SERVICE_URL", async (t) => {
  const created = await createDeposit();
  const r = await cli(["deposit", "show", created.id, "--json"], { GRPC_URL: `http://127.0.0.1:${await closedPort()}`, DEPOSIT_SERVICE_URL: url });
  t.is(r.code, 0, r.stderr);
  t.is((singleJson(r.stdout) as { deposit: DepositJson }).deposit.id, created.id);
});

test("deposit confirm completes a pending deposit with the requested amount; --json shows amount and requestedAmount", async (t) => {
  const created = await createDeposit(15050n);
  const r = await depositCli(["deposit", "confirm", created.id, "--json"]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, "");
  const { deposit } = singleJson(r.stdout) as { deposit: DepositJson };
  t.is(deposit.id, created.id);
  t.is(deposit.status, "DEPOSIT_STATUS_COMPLETED");
  t.is(deposit.amount, 15050);
  t.is(deposit.requestedAmount, 15050);
  t.truthy(deposit.completedAt);
  t.is((await showJson(created.id)).status, "DEPOSIT_STATUS_COMPLETED");
});

test("deposit confirm --amount completes with the amount received and keeps the original as requestedAmount", async (t) => {
  const created = await createDeposit(20000n);
  const r = await depositCli(["deposit", "confirm", created.id, "--amount", "19950", "--json"]);
  t.is(r.code, 0, r.stderr);
  const { deposit } = singleJson(r.stdout) as { deposit: DepositJson };
  t.is(deposit.status, "DEPOSIT_STATUS_COMPLETED");
  t.is(deposit.amount, 19950);
  t.is(deposit.requestedAmount, 20000);

  const human = await depositCli(["deposit", "confirm", (await createDeposit(20000n)).id, "--amount", "19950"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /confirmed: completed, 19950 kuruş \(199\.50 TRY\) received \(requested 20000 kuruş \(200\.00 TRY\)\)/);
});

test("deposit confirm of a completed deposit fails with INVALID_TRANSACTION_STATE, exits 1 and changes nothing", async (t) => {
  const created = await createDeposit(15050n);
  t.is((await depositCli(["deposit", "confirm", created.id])).code, 0);
  const before = await showJson(created.id);

  const again = await depositCli(["deposit", "confirm", created.id, "--amount", "100", "--json"]);
  t.is(again.code, 1);
  t.is(again.stdout, "");
  t.regex(again.stderr, /^error: INVALID_TRANSACTION_STATE: the deposit is completed/);
  t.regex(again.stderr, /"status":"completed"/);
  t.deepEqual(await showJson(created.id), before);
});

test("deposit reject without --reason is a usage error (exit 2) and leaves the deposit pending", async (t) => {
  const created = await createDeposit();
  for (const args of [[], ["--reason", ""], ["--reason", "   "]]) {
    const r = await depositCli(["deposit", "reject", created.id, ...args]);
    t.is(r.code, 2, args.join(" "));
    t.is(r.stdout, "");
    t.regex(r.stderr, /--reason/);
  }
  t.is((await showJson(created.id)).status, "DEPOSIT_STATUS_PENDING");
});

test("deposit reject sets a pending deposit failed with the reason", async (t) => {
  const created = await createDeposit();
  const r = await depositCli(["deposit", "reject", created.id, "--reason", "sender name does not match the customer", "--json"]);
  t.is(r.code, 0, r.stderr);
  const { deposit } = singleJson(r.stdout) as { deposit: DepositJson };
  t.is(deposit.status, "DEPOSIT_STATUS_FAILED");
  t.is(deposit.failureReason, "sender name does not match the customer");

  const shown = await depositCli(["deposit", "show", created.id]);
  t.regex(shown.stdout, /status\s+failed/);
  t.regex(shown.stdout, /failure reason\s+sender name does not match the customer/);

  const again = await depositCli(["deposit", "reject", created.id, "--reason", "twice"]);
  t.is(again.code, 1);
  t.regex(again.stderr, /^error: INVALID_TRANSACTION_STATE: /);
});

test("deposit show prints ids, status, amounts in kuruş and TRY, the reference, the assigned IBAN and ISO 8601 times", async (t) => {
  const created = await createDeposit(15050n);
  const r = await depositCli(["deposit", "show", created.id]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, new RegExp(`id\\s+${created.id}`));
  t.regex(r.stdout, new RegExp(`merchant\\s+${merchantId}`));
  t.regex(r.stdout, /status\s+pending/);
  t.regex(r.stdout, /amount\s+15050 kuruş \(150\.50 TRY\)/);
  t.regex(r.stdout, /requested amount\s+15050 kuruş \(150\.50 TRY\)/);
  t.regex(r.stdout, new RegExp(`reference\\s+${created.reference}`));
  t.true(r.stdout.includes(created.assignedAccount!.iban));
  t.regex(r.stdout, /created\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
  t.regex(r.stdout, /expires\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
});

test("deposit show of an unknown id exits 1 with TRANSACTION_NOT_FOUND", async (t) => {
  const r = await depositCli(["deposit", "show", "dep_doesnotexist"]);
  t.is(r.code, 1);
  t.is(r.stdout, "");
  t.regex(r.stderr, /^error: TRANSACTION_NOT_FOUND: /);
});

test("deposit list filters by merchant and status, newest first, and pages with --cursor", async (t) => {
  const merchants = createServiceClient(MerchantService, url);
  const lister = (await merchants.createMerchant({ name: "Lister", sandbox: true })).merchant!.id;
  const first = await createDeposit(10000n, lister);
  const second = await createDeposit(11000n, lister);
  const third = await createDeposit(12000n, lister);
  await depositCli(["deposit", "confirm", second.id]);

  const pending = await depositCli(["deposit", "list", "--merchant", lister, "--status", "pending", "--json"]);
  t.is(pending.code, 0, pending.stderr);
  const pendingPage = singleJson(pending.stdout) as { deposits: DepositJson[]; nextCursor: string };
  t.deepEqual(pendingPage.deposits.map((d) => d.id).sort(), [first.id, third.id].sort());
  t.is(pendingPage.nextCursor, "");

  const page1 = singleJson((await depositCli(["deposit", "list", "--merchant", lister, "--limit", "2", "--json"])).stdout) as { deposits: DepositJson[]; nextCursor: string };
  t.is(page1.deposits.length, 2);
  t.not(page1.nextCursor, "");
  const page2 = singleJson((await depositCli(["deposit", "list", "--merchant", lister, "--limit", "2", "--cursor", page1.nextCursor, "--json"])).stdout) as {
    deposits: DepositJson[];
    nextCursor: string;
  };
  t.is(page2.deposits.length, 1);
  t.is(page2.nextCursor, "");
  t.deepEqual([...page1.deposits, ...page2.deposits].map((d) => d.id).sort(), [first.id, second.id, third.id].sort());

  const human = await depositCli(["deposit", "list", "--merchant", lister, "--limit", "2"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^ID\s+MERCHANT\s+PROCESS ID\s+STATUS\s+AMOUNT\s+REFERENCE\s+ACCOUNT IBAN\s+CREATED/);
  t.regex(human.stdout, /More deposits: add --cursor \S+/);

  const none = await depositCli(["deposit", "list", "--merchant", otherMerchantId, "--status", "expired"]);
  t.is(none.stdout, "No deposits.\n");
});

test("deposit list refuses an unknown --status and a --limit outside 1..100 before any call", async (t) => {
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  for (const args of [["--status", "paid"], ["--limit", "0"], ["--limit", "101"], ["--limit", "abc"]]) {
    const r = await cli(["deposit", "list", ...args, "--grpc-url", nowhere]);
    t.is(r.code, 2, args.join(" "));
    t.notRegex(r.stderr, /cannot reach/);
  }
});

test("bad --amount (0, 1.5, abc, -5) is refused with exit 2 before any call by deposit confirm and transfer report", async (t) => {
  const created = await createDeposit();
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  for (const bad of ["0", "1.5", "abc", "-5", "1e3"]) {
    for (const grpcUrl of [nowhere, url]) {
      const confirm = await cli(["deposit", "confirm", created.id, "--amount", bad, "--grpc-url", grpcUrl]);
      t.is(confirm.code, 2, `confirm --amount ${bad}`);
      t.is(confirm.stdout, "");
      t.regex(confirm.stderr, /--amount/);
      t.notRegex(confirm.stderr, /cannot reach/);

      const report = await cli([
        "transfer", "report", "--iban", created.assignedAccount!.iban, "--amount", bad, "--sender", "Ayşe Yılmaz",
        "--reference", created.reference, "--bank-tx-id", `BAD-${bad}`, "--grpc-url", grpcUrl,
      ]);
      t.is(report.code, 2, `report --amount ${bad}`);
      t.regex(report.stderr, /--amount/);
    }
  }
  const after = await showJson(created.id);
  t.is(after.status, "DEPOSIT_STATUS_PENDING");
  t.is(after.sequence, 1);
});

test("transfer report to the assigned IBAN with the deposit's reference in the description completes it with the amount received", async (t) => {
  const created = await createDeposit(25000n);
  const iban = created.assignedAccount!.iban;
  const r = await depositCli([
    "transfer", "report", "--iban", iban, "--amount", "25000", "--sender", "AYSE YILMAZ",
    "--reference", `Ödeme ${created.reference} teşekkürler`, "--bank-tx-id", "BTX-MATCH-1", "--json",
  ]);
  t.is(r.code, 0, r.stderr);
  const res = singleJson(r.stdout) as ReportJson;
  t.false(res.duplicate);
  t.is(res.transfer.depositId, created.id);
  t.is(res.transfer.unmatchedReason, "");
  t.is(res.deposit?.id, created.id);
  t.is(res.deposit?.status, "DEPOSIT_STATUS_COMPLETED");
  t.is(res.deposit?.amount, 25000);
  t.is(res.deposit?.requestedAmount, 25000);
  t.is((await showJson(created.id)).status, "DEPOSIT_STATUS_COMPLETED");

  // Human output names the deposit and says it is completed; the IBAN may be typed in print form.
  const other = await createDeposit(30000n);
  const printed = other.assignedAccount!.iban.toLowerCase().replace(/(.{4})/g, "$1 ").trim();
  const human = await depositCli([
    "transfer", "report", "--iban", printed, "--amount", "30000", "--sender", "Ayşe Yılmaz",
    "--reference", other.reference, "--bank-tx-id", "BTX-MATCH-2",
  ]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, new RegExp(`^Matched: deposit ${other.id} \\(reference ${other.reference}\\) is now completed with 30000 kuruş \\(300\\.00 TRY\\) received\\.`));
});

test("who moved the money: deposit show names the completer and transfer show the reporter — a bank integration's identity, or the operator who confirmed it through the CLI", async (t) => {
  const viaBank = await createDeposit(12000n);
  const bankIntegration = createServiceClient(DepositService, url, { operator: null, workload: "bank-integration/test-bank" });
  const reported = await bankIntegration.reportTransfer({ iban: viaBank.assignedAccount!.iban, amount: 12000n, senderName: "Ayşe Yılmaz", reference: viaBank.reference, bankTransactionId: "BTX-WHO-1" });
  t.is(reported.deposit?.completedBy, "spiffe://payments.local/bank-integration/test-bank");
  const deposit = await depositCli(["deposit", "show", viaBank.id]);
  t.regex(deposit.stdout, /completed by\s+spiffe:\/\/payments\.local\/bank-integration\/test-bank\n/);
  const transfer = await depositCli(["transfer", "show", reported.transfer!.id]);
  t.is(transfer.code, 0, transfer.stderr);
  t.regex(transfer.stdout, /reported by\s+spiffe:\/\/payments\.local\/bank-integration\/test-bank\n/);

  const byHand = await createDeposit(13000n);
  t.notRegex((await depositCli(["deposit", "show", byHand.id])).stdout, /completed by/, "a pending deposit has no completer");
  t.is((await depositCli(["deposit", "confirm", byHand.id])).code, 0);
  t.regex((await depositCli(["deposit", "show", byHand.id])).stdout, /completed by\s+cli-test via spiffe:\/\/payments\.local\/cli\n/);
  t.is(((await showJson(byHand.id)) as DepositJson & { completedBy?: string }).completedBy, "cli-test via spiffe://payments.local/cli");
});

test("transfer report with the same --bank-tx-id again is a duplicate report and changes nothing", async (t) => {
  const created = await createDeposit(40000n);
  const iban = created.assignedAccount!.iban;
  const report = (amount: string, json: boolean) =>
    depositCli([
      "transfer", "report", "--iban", iban, "--amount", amount, "--sender", "Ayşe Yılmaz",
      "--reference", created.reference, "--bank-tx-id", "BTX-DUP-1", ...(json ? ["--json"] : []),
    ]);
  const first = singleJson((await report("40000", true)).stdout) as ReportJson;
  t.false(first.duplicate);
  const completed = await showJson(created.id);
  t.is(completed.status, "DEPOSIT_STATUS_COMPLETED");

  const again = await report("39000", true);
  t.is(again.code, 0, again.stderr);
  const second = singleJson(again.stdout) as ReportJson;
  t.true(second.duplicate);
  t.is(second.transfer.id, first.transfer.id);
  t.is(second.transfer.amount, 40000, "the first report stands");
  t.deepEqual(await showJson(created.id), completed, "the deposit did not change");

  const human = await report("40000", false);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^Duplicate report: bank transaction BTX-DUP-1 on \S+ was already reported at \S+; nothing changed\./);
  t.regex(human.stdout, new RegExp(`It had matched deposit ${created.id} \\(reference ${created.reference}\\), which is completed\\.`));
  t.deepEqual(await showJson(created.id), completed);
});

test("a transfer to an IBAN with no pending deposit is unmatched, says why, and appears in transfer unmatched", async (t) => {
  const iban = unusedIban();
  const r = await depositCli(["transfer", "report", "--iban", iban, "--amount", "5000", "--sender", "Mehmet Kaya", "--bank-tx-id", "BTX-LOST-1", "--json"]);
  t.is(r.code, 0, r.stderr);
  const res = singleJson(r.stdout) as ReportJson;
  t.false(res.duplicate);
  t.is(res.deposit, undefined);
  t.is(res.transfer.depositId, "");
  t.regex(res.transfer.unmatchedReason, /no pending deposit/);

  const human = await depositCli(["transfer", "report", "--iban", iban, "--amount", "6000", "--sender", "Mehmet Kaya", "--reference", "hediye", "--bank-tx-id", "BTX-LOST-2"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^Unmatched: no pending deposit is assigned to this account\./);

  const listed = await depositCli(["transfer", "unmatched", "--json"]);
  t.is(listed.code, 0, listed.stderr);
  const transfers = (singleJson(listed.stdout) as { transfers: TransferJson[] }).transfers.filter((tr) => tr.iban === iban);
  t.deepEqual(
    transfers.map((tr) => [tr.bankTransactionId, tr.amount, tr.senderName]),
    [
      ["BTX-LOST-1", 5000, "Mehmet Kaya"],
      ["BTX-LOST-2", 6000, "Mehmet Kaya"],
    ],
  );

  const table = await depositCli(["transfer", "unmatched", "--limit", "500"]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^ID\s+STATUS\s+AGE\s+REPORTED\s+IBAN\s+AMOUNT\s+SENDER\s+DESCRIPTION\s+BANK TX ID\s+WHY/);
  t.regex(table.stdout, new RegExp(`${iban}\\s+5000 kuruş \\(50\\.00 TRY\\)\\s+Mehmet Kaya`));

  const tooMany = await depositCli(["transfer", "unmatched", "--limit", "501"]);
  t.is(tooMany.code, 2);
});

test("deposit confirm --transfer settles an unmatched transfer: the deposit completes with its amount and the transfer leaves the list", async (t) => {
  const created = await createDeposit(70_000n);
  const iban = created.assignedAccount!.iban;
  const r = await depositCli(["transfer", "report", "--iban", iban, "--amount", "69123", "--sender", "Late Payer", "--bank-tx-id", `BTX-SETTLE-${created.id}`, "--json"]);
  const transfer = (singleJson(r.stdout) as ReportJson).transfer;
  t.is(transfer.depositId, "", "short paid without a reference: unmatched");
  const confirmed = await depositCli(["deposit", "confirm", created.id, "--transfer", transfer.id, "--json"]);
  t.is(confirmed.code, 0, confirmed.stderr);
  t.like(await showJson(created.id), { status: "DEPOSIT_STATUS_COMPLETED", amount: 69123, requestedAmount: 70000 });
  const listed = singleJson((await depositCli(["transfer", "unmatched", "--json"])).stdout) as { transfers: TransferJson[] };
  t.false(listed.transfers.some((tr) => tr.id === transfer.id));
});

test("transfer report needs --iban, --amount and --bank-tx-id (--sender only when the bank names one); a bad IBAN is the service's VALIDATION_ERROR", async (t) => {
  const base = ["--iban", unusedIban(), "--amount", "100", "--sender", "X", "--bank-tx-id", "BTX-REQ"];
  for (const option of ["--iban", "--amount", "--bank-tx-id"]) {
    const i = base.indexOf(option);
    const r = await depositCli(["transfer", "report", ...base.slice(0, i), ...base.slice(i + 2)]);
    t.is(r.code, 2, option);
    t.regex(r.stderr, new RegExp(option));
  }
  const bad = await depositCli(["transfer", "report", "--iban", "TR00 1234", "--amount", "100", "--sender", "X", "--bank-tx-id", "BTX-BADIBAN"]);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /^error: VALIDATION_ERROR: .*\(field: iban\)/);
});
