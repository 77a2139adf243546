import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { run, type Io } from "@payments/cli";
import { PayoutService, TransferReturnStatus } from "@payments/contracts/payout";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, eventually, TEST_OPERATOR_ENV, TEST_OPERATOR_PRIVATE_KEY_PEM, testWorkloadKeyPem } from "@payments/testing";
import { createPayoutModule } from "../src/index.js";
import { ORDINARY, recordingConnectors, WORKER_ENV, type Sent } from "./transfer-returns-suite.js";
import { payoutContext } from "./worker-fixtures.js";

// `pnpm cli transfer-return …` in-process: usage errors exit 2 before any call (the URL it
// would call has nothing listening, which would be exit 1), and list/complete/fail against a
// payout service on SQLite with the manual connector as the live one.
const dir = mkdtempSync(join(tmpdir(), "payout-transfer-returns-cli-"));
const sent: Sent = { sandbox: [], live: [] };
let running: RunningServices | undefined;

async function cli(args: readonly string[], env: Record<string, string | undefined>) {
  let stdout = "";
  let stderr = "";
  const io: Io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env };
  const code = await run(args, io);
  return { code, stdout, stderr };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test.before(async () => {
  // On the wall clock: the CLI signs its assertions (and its workload's) at the wall clock's time.
  running = await startServices([createPayoutModule(recordingConnectors(sent))], { mode: "all-in-one", env: { ...TEST_OPERATOR_ENV, ...WORKER_ENV, DATA_DIR: dir } });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("usage errors exit 2 before any call", async (t) => {
  const env = { GRPC_URL: `http://127.0.0.1:${await closedPort()}` };
  for (const args of [
    ["transfer-return", "complete"],
    ["transfer-return", "complete", "trr_x"],
    ["transfer-return", "complete", "trr_x", "--bank-reference", "   "],
    ["transfer-return", "fail", "trr_x"],
    ["transfer-return", "fail", "--reason", "closed"],
    ["transfer-return", "fail", "trr_x", "--reason", ""],
    ["transfer-return", "list", "--limit", "0"],
    ["transfer-return", "list", "--limit", "101"],
    ["transfer-return", "list", "--status", "returned"],
    ["transfer-return", "list", "--bogus"],
    ["transfer-return", "bogus"],
  ]) {
    const result = await cli(args, env);
    t.is(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    t.false(result.stderr.includes("cannot reach"), args.join(" "));
  }
  // The same line, well formed, does call (and finds nothing listening): exit 1.
  t.is((await cli(["transfer-return", "list"], env)).code, 1);
});

test("list --awaiting-operator [--json], complete --bank-reference, fail --reason", async (t) => {
  const payouts = createServiceClient(PayoutService, running!.server.url);
  // A finance operator on a machine holding the test operators' key, as the CLI named `cli` (its workload key).
  const env = {
    GRPC_URL: running!.server.url,
    OPERATOR_ASSERTION_PRIVATE_KEY: TEST_OPERATOR_PRIVATE_KEY_PEM,
    PAYMENTS_OPERATOR: "cli-test",
    PAYMENTS_OPERATOR_ROLE: "finance",
    WORKLOAD_KEY_CLI: testWorkloadKeyPem("cli"),
  };
  const make = async (transferId: string) =>
    (await payouts.createTransferReturn({ transferId, iban: ORDINARY, recipientName: "Zeynep Kaya", amount: 15_050n, currency: "", sandbox: false, reason: "unmatched", actor: "ayse" })).transferReturn!.id;
  const toComplete = await make("trf_cli_1");
  const toFail = await make("trf_cli_2");
  await eventually(async () => (await payoutContext(running!).db("transfer_returns").whereIn("id", [toComplete, toFail]).where({ awaiting_operator: true })).length === 2, "both awaiting an operator", 15_000);

  const table = await cli(["transfer-return", "list", "--awaiting-operator"], env);
  t.is(table.code, 0, table.stderr);
  t.true(table.stdout.includes(toComplete) && table.stdout.includes(toFail));
  t.true(table.stdout.includes("processing (awaiting operator)"));

  const json = await cli(["transfer-return", "list", "--awaiting-operator", "--json"], env);
  t.is(json.code, 0, json.stderr);
  const listed = JSON.parse(json.stdout) as { transferReturns: Array<{ id: string; amount: number; awaitingOperator: boolean }>; nextCursor: string };
  t.deepEqual(listed.transferReturns.map((r) => r.id).sort(), [toComplete, toFail].sort());
  t.true(listed.transferReturns.every((r) => r.amount === 15_050 && r.awaitingOperator));
  t.is(listed.nextCursor, "");

  const completed = await cli(["transfer-return", "complete", toComplete, "--bank-reference", "EFT-9"], env);
  t.is(completed.code, 0, completed.stderr);
  t.true(completed.stdout.includes(`Transfer return ${toComplete} completed`));
  const failed = await cli(["transfer-return", "fail", toFail, "--reason", "ACCOUNT_CLOSED", "--json"], env);
  t.is(failed.code, 0, failed.stderr);
  t.like(JSON.parse(failed.stdout), { transferReturn: { id: toFail, status: "TRANSFER_RETURN_STATUS_FAILED", failureReason: "ACCOUNT_CLOSED" } });

  const again = await cli(["transfer-return", "fail", toComplete, "--reason", "late"], env);
  t.is(again.code, 1);
  t.regex(again.stderr, /INVALID_TRANSACTION_STATE/);
  t.deepEqual((await cli(["transfer-return", "list", "--awaiting-operator", "--json"], env)).stdout.trim(), '{"transferReturns":[],"nextCursor":""}');
  const statuses = (await payouts.listTransferReturns({})).transferReturns.map((r) => TransferReturnStatus[r.status]).sort();
  t.deepEqual(statuses, ["COMPLETED", "FAILED"]);
});
