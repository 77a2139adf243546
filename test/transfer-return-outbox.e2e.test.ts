import test from "ava";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus, TransferStatus } from "@payments/contracts/deposit";
import { LatePaymentRule, MerchantService, OverpaymentRule, UnderpaymentRule } from "@payments/contracts/merchant";
import { openDatabase } from "@payments/kit";
import { addTestReceivingAccounts, createServiceClient, createTestDatabase, eventually, freePort, type OwnNatsServer, startNatsServer, TEST_OPERATOR_ENV, testOperator } from "@payments/testing";
import { startSplitDeployment, type SplitDeployment } from "@payments/testing/services";

// Issue 18: a return decided by an operator, or by a merchant's late-payment rule on arrival, is
// asked for through the deposit service's outbox in the decision's own transaction. The deposit service runs as a process of its own and is
// killed with SIGKILL after the decision committed but before its event could be published
// (NATS is down), then restarted: the return reaches the payout service exactly once, and the
// transfer ends returned. Split mode on MySQL with a JetStream server of this suite's own.

const token = "transfer-return-outbox-token";
const depositMain = fileURLToPath(new URL("../services/deposit/src/main.ts", import.meta.url));
let nats: OwnNatsServer;
/** The deposit service's database: its process is this suite's own. */
const depositDatabase = await createTestDatabase();
let split: SplitDeployment | undefined;
let depositProcess: ChildProcess | undefined;

test.before(async () => {
  nats = await startNatsServer();
  split = await startSplitDeployment({
    services: ["merchant", "bank-catalog", "payout"],
    token,
    natsUrl: nats.url,
    common: { LOG_LEVEL: "fatal" },
    env: { merchant: { MASTER_KEY: "e".repeat(64) }, payout: { PAYOUT_WORKER_INTERVAL: "50ms", SANDBOX_PAYOUT_DELAY: "10ms" } },
  });
  const common = { ...split.js, ...TEST_OPERATOR_ENV, GRPC_PORT: "0", INTERNAL_API_TOKEN: token, LOG_LEVEL: "fatal" };
  process.env.TRANSFER_RETURN_OUTBOX_COMMON = JSON.stringify(common);
});

test.after.always(async () => {
  depositProcess?.kill("SIGKILL");
  await split?.stop();
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (nats as typeof nats | undefined)?.destroy();
  await depositDatabase.drop();
});

/** The deposit service as deployed: its own process, on its own port. */
async function startDepositProcess(port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const common = JSON.parse(process.env.TRANSFER_RETURN_OUTBOX_COMMON!) as Record<string, string>;
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", depositMain], {
    env: {
      ...process.env,
      ...common,
      GRPC_PORT: String(port),
      LOG_LEVEL: "info",
      DATABASE_URL: depositDatabase.url,
      MERCHANT_SERVICE_URL: split!.url("merchant"),
      BANK_CATALOG_SERVICE_URL: split!.url("bank-catalog"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await eventually(() => output.includes("deposit service ready"), "the deposit service process to start", 60_000).catch((err: unknown) => {
    child.kill("SIGKILL");
    throw new Error(`${(err as Error).message}\n${output}`);
  });
  return { child, output: () => output };
}

test("a return committed with its outbox event survives a kill -9 before the publish: after the restart it is requested exactly once", async (t) => {
  const port = await freePort();
  const first = await startDepositProcess(port);
  depositProcess = first.child;
  const url = `http://127.0.0.1:${port}`;
  const deposits = createServiceClient(DepositService, url, { token });
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, split!.url("bank-catalog"), { token }));
  const { accounts } = await createServiceClient(BankCatalogService, split!.url("bank-catalog"), { token }).listReceivingAccounts({ sandbox: true });
  const account = accounts[0]!;
  // A sandbox merchant whose late payments go straight back, with a deposit that expired.
  const merchants = createServiceClient(MerchantService, split!.url("merchant"), { token });
  const { merchant } = await merchants.createMerchant({ name: "Late Returns Shop", sandbox: true });
  await merchants.setPaymentRules({ merchantId: merchant!.id, underpayment: UnderpaymentRule.REVIEW, overpayment: OverpaymentRule.COMPLETE, latePayment: LatePaymentRule.RETURN });
  const { deposit } = await deposits.createDeposit({ merchantId: merchant!.id, processId: "late-1", amount: 250_00n, bankId: account.bankId, customer: { id: "c1", name: "Murat Demir", username: "murat" } });
  await deposits.sandboxExpireDeposit({ merchantId: merchant!.id, depositId: deposit!.id });

  // Money nobody awaits, from a sender the bank named with an IBAN: in suspense.
  const { transfer } = await deposits.reportTransfer({
    iban: account.iban,
    amount: 123_45n,
    senderName: "Hatice Kaya",
    senderIban: "TR330006100519786457841326",
    reference: "yanlış gönderim",
    bankTransactionId: "OUTBOX-KILL-1",
  });
  t.is(transfer?.status, TransferStatus.UNMATCHED);

  // NATS goes away: the decision still commits (status, suspense, action and the outbox event), nothing is published.
  await nats.stop();
  // The operator who decides is the assertion's subject: ops-ali (a sandbox transfer's return needs no second operator).
  const decided = await createServiceClient(DepositService, url, { token, operator: testOperator("finance", "ops-ali") }).resolveTransfer({ transferId: transfer!.id, actor: "ops-ali", reason: "sent to us by mistake", decision: { case: "return", value: { iban: "", recipientName: "" } } });
  t.is(decided.transfer?.status, TransferStatus.RETURNING);
  // The merchant's rule decides a return on arrival: the same transaction records the transfer and asks for it.
  const late = await deposits.reportTransfer({
    iban: deposit!.assignedAccount!.iban,
    amount: 250_00n,
    senderName: "Murat Demir",
    senderIban: "TR320010009999901234567890",
    reference: `ödeme ${deposit!.reference}`,
    bankTransactionId: "OUTBOX-KILL-2",
  });
  t.like(late.transfer, { status: TransferStatus.RETURNING, reviewDepositId: deposit!.id, late: true });
  const depositDb = openDatabase({ url: depositDatabase.url, poolMax: 1 });
  const payoutDb = openDatabase({ url: split!.databases.payout!.url, poolMax: 1 });
  try {
    const pending = await depositDb("outbox").where({ topic: "deposit.v1.transfer_return_requested" }).select<Array<{ event_id: string; published_at: number | null }>>("event_id", "published_at");
    t.is(pending.length, 2, "one return request in the outbox per decision");
    t.true(pending.every((p) => p.published_at === null), "not published: NATS is down");

    // Killed between the commit and the publish.
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;
    await nats.start();
    const second = await startDepositProcess(port);
    depositProcess = second.child;

    // The restarted relay publishes it; the payout service makes the return; the sandbox bank pays it; the deposit service settles.
    for (const id of [transfer!.id, late.transfer!.id]) {
      await eventually(async () => (await deposits.getTransfer({ transferId: id })).transfer?.status === TransferStatus.RETURNED, "the transfers to be returned", 30_000);
    }
    // Long enough for a second request, if there were one, to have been taken.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const returns = await payoutDb("transfer_returns").where({ transfer_id: transfer!.id }).select<Array<Record<string, unknown>>>("attempt", "status", "recipient_name", "iban", "amount", "sandbox");
    t.deepEqual(
      returns.map((r) => [Number(r.attempt), r.status, r.recipient_name, r.iban, Number(r.amount), Boolean(r.sandbox)]),
      [[1, "completed", "Hatice Kaya", "TR330006100519786457841326", 123_45, true]],
      "exactly one return, attempt 1, paid to the sender the bank named",
    );
    const lateReturns = await payoutDb("transfer_returns").where({ transfer_id: late.transfer!.id }).select<Array<Record<string, unknown>>>("attempt", "status", "recipient_name", "actor");
    t.deepEqual(
      lateReturns.map((r) => [Number(r.attempt), r.status, r.recipient_name, r.actor]),
      [[1, "completed", "Murat Demir", "rules"]],
      "the rule's return, exactly once",
    );
    t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit!.id } })).deposit?.status, DepositStatus.EXPIRED, "the late payment never completed its deposit");
    const published = await depositDb("outbox").where({ topic: "deposit.v1.transfer_return_requested" }).select<Array<{ published_at: number | null }>>("published_at");
    t.is(published.length, 2);
    t.true(published.every((p) => p.published_at !== null), "published after the restart");
    const actions = await depositDb("transfer_actions").where({ transfer_id: transfer!.id }).orderBy([{ column: "at" }, { column: "id" }]).select<Array<{ action: string; actor: string }>>("action", "actor");
    t.deepEqual(
      actions.map((a) => [a.action, a.actor]),
      [
        ["return_requested", "ops-ali"],
        ["returned", "payout"],
      ],
    );
  } finally {
    await depositDb.destroy();
    await payoutDb.destroy();
  }
});
