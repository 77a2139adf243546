import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { DepositService, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { createServiceClient } from "@payments/testing";
import { type RunningServices } from "@payments/kit";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { formatAge } from "../src/commands/transfer.js";
import { cli, closedPort, singleJson } from "./capture.js";

// The transfer review commands (unmatched, show, match/complete/refuse/return, import) and
// reconcile: usage errors refused before any call (against a closed port), then behaviour
// in-process against the real merchant, bank-catalog and deposit services, all-in-one on
// SQLite in a temporary directory of its own (so reconcile sees only this file's transfers).

interface TransferJson {
  id: string;
  iban: string;
  amount: number;
  status: string;
  depositId: string;
  unmatchedReason: string;
  reportedAt: string;
  ageSeconds?: number;
  actions: Array<{ action: string; actor: string; reason: string; depositId: string; at: string }>;
}

interface DepositJson {
  id: string;
  status: string;
  amount: number;
}

// ---------------------------------------------------------------------------------------------
// Usage errors: exit 2, nothing on stdout, and no call (the service URL is a closed port, so a
// call would have failed with "cannot reach" and exit 1).

async function nowhere(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}

test("formatAge: the two largest units", (t) => {
  t.is(formatAge(0), "0s");
  t.is(formatAge(45), "45s");
  t.is(formatAge(12 * 60 + 5), "12m 5s");
  t.is(formatAge(3 * 3600 + 12 * 60 + 59), "3h 12m");
  t.is(formatAge(2 * 86_400 + 4 * 3600 + 7), "2d 4h");
  t.is(formatAge(3600), "1h 0m");
});

test("transfer match, complete, refuse and return need --reason (exit 2 before any call)", async (t) => {
  const url = await nowhere();
  const commands = [
    ["transfer", "match", "trf_1", "dep_1"],
    ["transfer", "complete", "trf_1"],
    ["transfer", "refuse", "trf_1"],
    ["transfer", "return", "trf_1"],
    ["transfer", "return", "trf_1", "--iban", "TR330006100519786457841326"],
  ];
  for (const command of commands) {
    for (const reason of [[], ["--reason", ""], ["--reason", "   "]]) {
      const r = await cli([...command, ...reason, "--actor", "ayse", "--grpc-url", url]);
      const label = [...command, ...reason].join(" ");
      t.is(r.code, 2, label);
      t.is(r.stdout, "", label);
      t.regex(r.stderr, /--reason/, label);
      t.notRegex(r.stderr, /cannot reach/, label);
    }
  }
  // match needs both ids.
  const missing = await cli(["transfer", "match", "trf_1", "--reason", "x", "--grpc-url", url]);
  t.is(missing.code, 2);
  t.notRegex(missing.stderr, /cannot reach/);
  // An empty --actor is refused too.
  const noActor = await cli(["transfer", "refuse", "trf_1", "--reason", "x", "--actor", " ", "--grpc-url", url]);
  t.is(noActor.code, 2);
  t.regex(noActor.stderr, /--actor/);
});

test("transfer unmatched refuses a bad --older-than and --limit (exit 2 before any call)", async (t) => {
  const url = await nowhere();
  for (const args of [["--older-than", "abc"], ["--older-than", "1.5h"], ["--older-than", "-1"], ["--older-than", "3w"], ["--limit", "0"], ["--limit", "501"]]) {
    const r = await cli(["transfer", "unmatched", ...args, "--grpc-url", url]);
    t.is(r.code, 2, args.join(" "));
    t.is(r.stdout, "");
    t.regex(r.stderr, new RegExp(args[0]!), args.join(" "));
    t.notRegex(r.stderr, /cannot reach/, args.join(" "));
  }
});

test("transfer import refuses an unknown --format and an unreadable file, with its path (exit 2 before any call)", async (t) => {
  const url = await nowhere();
  const dir = await mkdtemp(join(tmpdir(), "cli-import-test-"));
  try {
    const missingFile = join(dir, "no-such-statement.sta");
    for (const args of [["--format", "csv", "--file", missingFile], ["--format", "", "--file", missingFile], ["--file", missingFile]]) {
      const r = await cli(["transfer", "import", ...args, "--grpc-url", url]);
      t.is(r.code, 2, args.join(" "));
      t.is(r.stdout, "");
      t.regex(r.stderr, /--format/, args.join(" "));
      t.notRegex(r.stderr, /cannot reach/);
    }
    const noFileOption = await cli(["transfer", "import", "--format", "mt940", "--grpc-url", url]);
    t.is(noFileOption.code, 2);
    t.regex(noFileOption.stderr, /--file/);

    for (const path of [missingFile, dir /* a directory is not a readable file either */]) {
      const r = await cli(["transfer", "import", "--format", "MT940", "--file", path, "--json", "--grpc-url", url]);
      t.is(r.code, 2, path);
      t.is(r.stdout, "");
      t.true(r.stderr.includes(path), r.stderr);
      t.regex(r.stderr, /^error: cannot read /);
      t.notRegex(r.stderr, /cannot reach/);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("reconcile refuses a bad --from/--to and --from not before --to (exit 2 before any call)", async (t) => {
  const url = await nowhere();
  for (const args of [["--from", "yesterday"], ["--to", "2026-11-22T10:00"], ["--from", "2026-02-30"], ["--from", "2026-11-22", "--to", "2026-11-22"], ["--from", "2026-11-23", "--to", "2026-11-22"]]) {
    const r = await cli(["reconcile", ...args, "--grpc-url", url]);
    t.is(r.code, 2, args.join(" "));
    t.is(r.stdout, "");
    t.notRegex(r.stderr, /cannot reach/, args.join(" "));
  }
});

// ---------------------------------------------------------------------------------------------
// Behaviour against the real services.

let running: RunningServices | undefined;
let dataDir: string | undefined;
let url: string;
let merchantId: string;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let processCounter = 0;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-transfer-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" },
    receivingAccounts: true,
  });
  url = running.server.url;
  deposits = createServiceClient(DepositService, url);
  merchantId = (await createServiceClient(MerchantService, url).createMerchant({ name: "Transfer Shop", sandbox: true })).merchant!.id;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function createDeposit(amount: bigint): Promise<Deposit> {
  const n = ++processCounter;
  const res = await deposits.createDeposit({
    merchantId,
    processId: `order-${n}`,
    amount,
    customer: { id: `cust-${n}`, name: "Ayşe Yılmaz", username: `ayse${n}` },
  });
  const deposit = res.deposit!;
  if (deposit.status !== DepositStatus.PENDING || !deposit.assignedAccount) throw new Error("expected a pending deposit with an assigned account");
  return deposit;
}

async function transferCli(args: readonly string[], env: Record<string, string> = {}) {
  return cli([...args, "--grpc-url", url], env);
}

async function reportUnmatched(iban: string, amount: string, bankTxId: string): Promise<TransferJson> {
  // No reference, a sender who is not the customer, an amount no deposit waits for: nothing to match.
  const r = await transferCli(["transfer", "report", "--iban", iban, "--amount", amount, "--sender", "Zeynep Unrelated", "--bank-tx-id", bankTxId, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  const { transfer } = singleJson(r.stdout) as { transfer: TransferJson; deposit?: DepositJson };
  if (transfer.depositId !== "") throw new Error(`expected an open transfer, got ${r.stdout}`);
  return transfer;
}

test.serial("an unmatched transfer is listed by transfer unmatched --json with its ageSeconds; the table shows STATUS and AGE", async (t) => {
  const created = await createDeposit(15050n);
  const transfer = await reportUnmatched(created.assignedAccount!.iban, "777", `BTX-OPEN-${created.id}`);

  const r = await transferCli(["transfer", "unmatched", "--json"]);
  t.is(r.code, 0, r.stderr);
  const listed = (singleJson(r.stdout) as { transfers: TransferJson[] }).transfers.find((tr) => tr.id === transfer.id);
  t.truthy(listed, r.stdout);
  t.is(typeof listed!.ageSeconds, "number");
  t.true(listed!.ageSeconds! >= 0 && listed!.ageSeconds! < 120, String(listed!.ageSeconds));
  t.true(["TRANSFER_STATUS_UNMATCHED", "TRANSFER_STATUS_REVIEW"].includes(listed!.status), listed!.status);

  // Reported just now: not older than an hour.
  const old = await transferCli(["transfer", "unmatched", "--older-than", "1h", "--json"]);
  t.is(old.code, 0, old.stderr);
  t.false((singleJson(old.stdout) as { transfers: TransferJson[] }).transfers.some((tr) => tr.id === transfer.id));

  const table = await transferCli(["transfer", "unmatched"]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^ID\s+STATUS\s+AGE\s+REPORTED\s+IBAN/);
  t.regex(table.stdout, new RegExp(`${transfer.id}\\s+(unmatched|review)\\s+\\d+s\\s`));
});

test.serial("transfer match completes the deposit; transfer show lists the action with the actor (PAYMENTS_OPERATOR)", async (t) => {
  const created = await createDeposit(20000n);
  const transfer = await reportUnmatched(created.assignedAccount!.iban, "19990", `BTX-MATCH-${created.id}`);

  const r = await transferCli(["transfer", "match", transfer.id, created.id, "--reason", "customer sent the receipt", "--json"], { PAYMENTS_OPERATOR: "ops-ayse" });
  t.is(r.code, 0, r.stderr);
  const res = singleJson(r.stdout) as { transfer: TransferJson; deposit?: DepositJson };
  t.is(res.deposit?.id, created.id);
  t.is(res.deposit?.status, "DEPOSIT_STATUS_COMPLETED");
  t.is(res.deposit?.amount, 19990);
  t.is(res.transfer.status, "TRANSFER_STATUS_MATCHED");
  t.is(res.transfer.depositId, created.id);

  const shown = await transferCli(["transfer", "show", transfer.id, "--json"]);
  t.is(shown.code, 0, shown.stderr);
  const { transfer: detail } = singleJson(shown.stdout) as { transfer: TransferJson };
  const action = detail.actions.find((a) => a.actor === "ops-ayse");
  t.truthy(action, shown.stdout);
  t.is(action!.reason, "customer sent the receipt");
  t.is(action!.depositId, created.id);

  const human = await transferCli(["transfer", "show", transfer.id]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /status\s+matched/);
  t.regex(human.stdout, /Actions:\nAT\s+ACTION\s+ACTOR\s+DEPOSIT\s+REASON\n/);
  t.regex(human.stdout, new RegExp(`ops-ayse\\s+${created.id}\\s+customer sent the receipt`));

  // No longer open.
  const open = singleJson((await transferCli(["transfer", "unmatched", "--json"])).stdout) as { transfers: TransferJson[] };
  t.false(open.transfers.some((tr) => tr.id === transfer.id));

  // deposit show tells how it was matched.
  const dep = await transferCli(["deposit", "show", created.id]);
  t.is(dep.code, 0, dep.stderr);
  t.regex(dep.stdout, /matched\s+operator/);
});

test.serial("reconcile --json is balanced (exit 0) after matched and unmatched transfers", async (t) => {
  const r = await transferCli(["reconcile", "--json"]);
  t.is(r.code, 0, r.stderr + r.stdout);
  const res = singleJson(r.stdout) as { balanced: boolean; accounts: Array<{ iban: string; received: number; difference: number; discrepancies: string[] }> };
  t.is(Object.keys(res)[0], "balanced");
  t.true(res.balanced);
  t.true(res.accounts.length > 0);
  for (const a of res.accounts) {
    t.is(typeof a.received, "number");
    t.is(a.difference, 0);
    t.deepEqual(a.discrepancies, []);
  }

  const human = await transferCli(["reconcile", "--from", "2000-01-01"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /IBAN\s+CURRENCY\s+RECEIVED\s+CREDITED\s+SUSPENSE\s+RETURNED\s+DIFFERENCE/);
  t.regex(human.stdout, /\nBalanced\.\n$/);
});

test.serial("transfer return of money whose sender the bank did not name needs --name: refused saying so, then paid to that name", async (t) => {
  const created = await createDeposit(30_000n);
  const r = await transferCli(["transfer", "report", "--iban", created.assignedAccount!.iban, "--amount", "4321", "--bank-tx-id", `BTX-NONAME-${created.id}`, "--json"]);
  t.is(r.code, 0, r.stderr);
  const { transfer } = singleJson(r.stdout) as { transfer: TransferJson };
  const iban = "TR330006100519786457841326";

  const refused = await transferCli(["transfer", "return", transfer.id, "--iban", iban, "--reason", "not ours"]);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /recipient_name: the bank named no sender for this transfer; give the recipient's name for the return \(--name\)/);
  t.is((singleJson((await transferCli(["transfer", "show", transfer.id, "--json"])).stdout) as { transfer: TransferJson }).transfer.status, "TRANSFER_STATUS_UNMATCHED", "nothing changed");

  const returned = await transferCli(["transfer", "return", transfer.id, "--iban", iban, "--name", "Selin Aksoy", "--reason", "not ours", "--json"], { PAYMENTS_OPERATOR: "ops-can" });
  t.is(returned.code, 0, returned.stderr);
  t.is((singleJson(returned.stdout) as { transfer: TransferJson }).transfer.status, "TRANSFER_STATUS_RETURNING");
  const shown = singleJson((await transferCli(["transfer", "show", transfer.id, "--json"])).stdout) as { transfer: TransferJson };
  t.regex(shown.transfer.actions.find((a) => a.action === "return_requested")!.reason, /^to TR330006100519786457841326 \(Selin Aksoy\): not ours$/);
});

test("transfer import takes camt053 and camt054 as formats and refuses --timeout 0s (exit 2 before any call)", async (t) => {
  const url = await nowhere();
  const r = await cli(["transfer", "import", "--format", "camt.053", "--file", "/nonexistent.xml", "--grpc-url", url]);
  t.is(r.code, 2);
  t.regex(r.stderr, /cannot read \/nonexistent\.xml/, "camt.053 is a format: the file is what fails");
  const zero = await cli(["transfer", "import", "--format", "camt054", "--file", "/nonexistent.xml", "--timeout", "0s", "--grpc-url", url]);
  t.is(zero.code, 2);
  t.regex(zero.stderr, /--timeout must be longer than 0s/);
});
