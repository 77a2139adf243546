import test from "ava";
import type { ChildProcess } from "node:child_process";
import { DepositService } from "@payments/contracts/deposit";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AllInOneProcess, CallbackReceiver, runCli, spawnAllInOne, testPayee } from "@payments/testing";
import { verifyCallback } from "@payments/signing";
import { bankListProblems, signedFetch, type BankEntry } from "./helpers.js";

// The newcomer's path, for real: `pnpm start` on embedded SQLite, a merchant from
// `pnpm cli merchant create --json`, a signed bank list, then SIGTERM.
let app: AllInOneProcess;
let server: ChildProcess;
let gatewayUrl = "";
let grpcUrl = "";
let merchant: { merchantId: string; apiKey: string; apiSecret: string } | undefined;

test.before(async () => {
  app = await spawnAllInOne({ DEPOSIT_TTL: "20s", DEPOSIT_EXPIRY_INTERVAL: "200ms", SANDBOX_PAYOUT_DELAY: "50ms", PAYOUT_WORKER_INTERVAL: "100ms", CALLBACK_ALLOW_PRIVATE: "1", CALLBACK_RETRY_SCHEDULE: "100ms,200ms", CALLBACK_POLL_INTERVAL: "50ms" });
  ({ child: server, gatewayUrl, grpcUrl } = app);
});

// app is unset if spawnAllInOne failed: its declared type says otherwise.
test.after.always(() => (app as typeof app | undefined)?.stop());

// As an operator on the same machine runs it: with the data directory, where the local admin key is.
const cli = (args: string[], env: Record<string, string> = {}) => app.cli(args, env);

/** The approval id in an APPROVAL_REQUIRED refusal, approved by a second operator on this machine (the local admin key signs for any name). */
async function secondOperatorApproves(refused: { code: number | null; stderr: string }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const id = /^error: APPROVAL_REQUIRED: .*"approvalId":"(apr_[^"]+)"/.exec(refused.stderr)?.[1];
  if (refused.code !== 1 || !id) throw new Error(`expected APPROVAL_REQUIRED, got ${refused.code}: ${refused.stderr}`);
  return cli(["approval", "approve", id, "--json"], { PAYMENTS_OPERATOR: "second-operator" });
}

test.serial("pnpm start keeps a local admin key (0600) in its data directory: `pnpm cli` with that DATA_DIR acts as an operator, without any key it is refused UNAUTHENTICATED", async (t) => {
  const keyFile = join(app.dataDir, "operator-admin.key");
  const mode = statSync(keyFile).mode & 0o777;
  t.is(mode, 0o600, `mode ${mode.toString(8)}`);
  t.regex(app.operatorKey(), /^-----BEGIN PRIVATE KEY-----\n/);
  t.true(app.logLines.some((line) => line.includes("OPERATOR_ASSERTION_PUBLIC_KEY is not set: made a local admin key")), "it says it made one");

  const made = await runCli(["merchant", "create", "--name", "Key Holder Shop", "--sandbox", "--json"], { GRPC_URL: grpcUrl, DATA_DIR: app.dataDir, PAYMENTS_OPERATOR: "newcomer" });
  t.is(made.code, 0, made.stderr);
  const { merchantId } = JSON.parse(made.stdout) as { merchantId: string };
  const audit = await runCli(["audit", "list", "--target", merchantId, "--service", "merchant", "--json"], { GRPC_URL: grpcUrl, DATA_DIR: app.dataDir });
  t.is(audit.code, 0, audit.stderr);
  t.like((JSON.parse(audit.stdout) as { records: unknown[] }).records, [{ actor: "newcomer", rpc: "payments.merchant.v1.MerchantService/CreateMerchant", outcome: "ok" }]);

  const elsewhere = mkdtempSync(join(tmpdir(), "no-operator-key-"));
  try {
    // Without either key: the program is nobody.
    const nobody = await runCli(["merchant", "create", "--name", "Nobody's Shop", "--sandbox", "--json"], { GRPC_URL: grpcUrl, DATA_DIR: elsewhere });
    t.is(nobody.code, 1);
    t.is(nobody.stdout, "");
    t.regex(nobody.stderr, /^error: UNAUTHENTICATED: CreateMerchant needs the caller's workload identity \(x-workload-identity\)/);
    t.regex(nobody.stderr, /WORKLOAD_KEY.*<DATA_DIR>\/workloads\/cli\.key/, "it says how the CLI names itself");
    // The machine's CLI (its workload key) without the admin key: the person is nobody.
    const refused = await runCli(["merchant", "create", "--name", "Nobody's Shop", "--sandbox", "--json"], { GRPC_URL: grpcUrl, DATA_DIR: elsewhere, WORKLOAD_KEY: join(app.dataDir, "workloads", "cli.key") });
    t.is(refused.code, 1);
    t.regex(refused.stderr, /^error: UNAUTHENTICATED: CreateMerchant is an operator's action: it needs a signed operator assertion \(x-operator-assertion\)/);
    t.regex(refused.stderr, /PAYMENTS_OPERATOR_TOKEN.*OPERATOR_ASSERTION_PRIVATE_KEY.*<DATA_DIR>\/operator-admin\.key/, "it says how the CLI signs");
  } finally {
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test.serial("pnpm start prints a ready line naming the gateway's bound address, a URL to open that answers, and the internal address", async (t) => {
  t.regex(gatewayUrl, /^http:\/\/.+:\d+$/);
  t.regex(grpcUrl, /^http:\/\/.+:\d+$/);
  const port = new URL(gatewayUrl).port;
  const ready = app.logLines.find((line) => line.includes('"msg":"ready'));
  // HOST defaults to 0.0.0.0: every interface, which is what the line must say.
  t.truthy(ready?.includes(`ready: gateway listening on 0.0.0.0:${port} (open http://localhost:${port}/docs in your browser: the API reference)`), ready);
  // The address it names is the API reference, and the bare address leads there.
  const named = /\(open (\S+) in your browser/.exec(ready ?? "")?.[1] ?? "";
  const page = await fetch(named.replace("localhost", "127.0.0.1"));
  t.is(page.status, 200, named);
  t.regex(page.headers.get("content-type") ?? "", /^text\/html/);
  const root = await fetch(`${gatewayUrl}/`, { redirect: "manual" });
  t.is(root.status, 302);
  t.is(root.headers.get("location"), "/docs");
});

/** A live merchant, made by two admins of this machine: the approver is shown its secrets, once (`approval approve --json` → merchant). */
async function liveMerchant(name: string, ...options: string[]): Promise<{ merchantId: string; apiKey: string; apiSecret: string; webhookSecret: string }> {
  const approved = await secondOperatorApproves(await cli(["merchant", "create", "--name", name, ...options, "--json"]));
  if (approved.code !== 0) throw new Error(approved.stderr);
  return (JSON.parse(approved.stdout) as { merchant: { merchantId: string; apiKey: string; apiSecret: string; webhookSecret: string } }).merchant;
}

test.serial("a live merchant made with `pnpm cli merchant create --json` (and a second admin's `approval approve --json`) gets the signed bank list: empty while no live account exists", async (t) => {
  const asked = await cli(["merchant", "create", "--name", "Newcomer Shop", "--json"]);
  t.is(asked.code, 1, "a live merchant waits for a second admin");
  const approved = await secondOperatorApproves(asked);
  t.is(approved.code, 0, approved.stderr);
  const lines = approved.stdout.trim().split("\n");
  t.is(lines.length, 1, `exactly one line of JSON, got:\n${approved.stdout}`);
  const creds = (JSON.parse(lines[0]!) as { merchant: { merchantId: string; apiKey: string; apiSecret: string } }).merchant;
  t.deepEqual(Object.keys(creds).sort(), ["apiKey", "apiSecret", "merchantId", "webhookSecret"]);
  merchant = creds;
  const res = await signedFetch(gatewayUrl, creds, "GET", "/v1/available-banks");
  t.is(res.status, 200, JSON.stringify(res.json));
  // A fresh install has no live receiving account, so no bank would take this live merchant's deposit.
  t.deepEqual(res.json.data, { banks: [] });
  const wrong = await signedFetch(gatewayUrl, { ...creds, apiSecret: "sk_wrong" }, "GET", "/v1/available-banks");
  t.is(wrong.status, 401);
  t.is((wrong.json.error as { code: string }).code, "INVALID_SIGNATURE");
});

/** A valid Akbank IBAN standing in for the operator's own account at that bank. */
const LIVE_IBAN = "TR940004607000000000000001";

type DepositRecord = { transactionId: string; status: string; amount: number; reference: string; checkoutUrl: string; assignedAccount?: { iban: string } };

async function createDeposit(processId: string, amount: number): Promise<DepositRecord> {
  const res = await signedFetch(gatewayUrl, merchant!, "POST", "/v1/deposit", { processId, amount, customer: { id: "cus_1", name: "Elif Şahin", username: "elif" } });
  if (res.status !== 201) throw new Error(`deposit not created: ${JSON.stringify(res.json)}`);
  return res.json.data as DepositRecord;
}

test.serial("a live merchant's deposit is BANK_UNAVAILABLE on a fresh install; `pnpm cli account add` of a live account makes it work", async (t) => {
  const refused = await signedFetch(gatewayUrl, merchant!, "POST", "/v1/deposit", { processId: "aio-order-0", amount: 35_000, customer: { id: "cus_1", name: "Elif Şahin", username: "elif" } });
  t.is(refused.status, 400);
  t.like(refused.json.error, { code: "BANK_UNAVAILABLE", message: "no receiving account is available for this bank" });
  t.is((await signedFetch(gatewayUrl, merchant!, "GET", "/v1/deposit?processId=aio-order-0")).status, 404, "nothing was stored");

  const banks = await cli(["bank", "list", "--json"]);
  t.is(banks.code, 0, banks.stderr);
  const akbank = (JSON.parse(banks.stdout) as { banks: Array<{ id: string; code: string }> }).banks.find((b) => b.code === "0046")!;
  // A live receiving account is where real money arrives: a second operator approves it.
  const asked = await cli(["account", "add", "--bank", akbank.id, "--name", "Ödeme Hizmetleri A.Ş.", "--iban", LIVE_IBAN, "--fast", "--json"]);
  t.is(asked.code, 1, asked.stdout);
  t.is((JSON.parse((await cli(["account", "list", "--live", "--json"])).stdout) as { accounts: unknown[] }).accounts.length, 0, "nothing is added before the approval");
  const added = await secondOperatorApproves(asked);
  t.is(added.code, 0, added.stderr);
  const approval = JSON.parse(added.stdout) as { status: string; maker: string; decidedBy: string; outcome: string; responseJson: string };
  t.like(approval, { status: "APPROVAL_STATUS_APPROVED", maker: "cli-test", decidedBy: "second-operator", outcome: "ok" });
  t.like(JSON.parse(approval.responseJson), { account: { iban: LIVE_IBAN, active: true } });
  const live = await cli(["account", "list", "--live", "--json"]);
  t.deepEqual((JSON.parse(live.stdout) as { accounts: Array<{ iban: string }> }).accounts.map((a) => a.iban), [LIVE_IBAN], "the only live account is the operator's");
  // The list follows within the catalog cache's bound: Akbank and FAST (the account takes FAST), nothing else.
  let listed: BankEntry[] = [];
  for (let i = 0; i < 50; i++) {
    const res = await signedFetch(gatewayUrl, merchant!, "GET", "/v1/available-banks");
    listed = (res.json.data as { banks: BankEntry[] }).banks;
    if (listed.length === 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.deepEqual(bankListProblems({ banks: listed }), []);
  t.deepEqual(listed.map((b) => b.code).sort(), ["0046", "FAST"]);
});

test.serial("a deposit's checkout page shows its account, and `pnpm cli transfer report` with its reference makes it completed", async (t) => {
  const deposit = await createDeposit("aio-order-1", 35_000);
  t.is(deposit.assignedAccount?.iban, LIVE_IBAN, "a live merchant's customer pays into the live account, never a sandbox one");
  // PUBLIC_BASE_URL defaults to http://localhost:{PORT}.
  t.is(deposit.checkoutUrl.replace(/\?.*$/, ""), `http://localhost:${new URL(gatewayUrl).port}/checkout`);
  const page = await fetch(deposit.checkoutUrl.replace(/^https?:\/\/[^/]+/, gatewayUrl));
  t.is(page.status, 200);
  const html = await page.text();
  t.true(html.includes(deposit.reference));

  const reported = await cli([
    "transfer", "report",
    "--iban", deposit.assignedAccount!.iban,
    "--amount", "35000",
    "--sender", "ELIF SAHIN",
    "--reference", deposit.reference,
    "--bank-tx-id", "aio-btx-1",
    "--json",
  ]);
  t.is(reported.code, 0, reported.stderr);
  const read = await signedFetch(gatewayUrl, merchant!, "GET", `/v1/deposit/${deposit.transactionId}`);
  t.like(read.json.data, { status: "completed", amount: 35_000 });
});

test.serial("`pnpm cli deposit reject` fails a pending deposit and an unpaid one expires after DEPOSIT_TTL", async (t) => {
  const rejected = await createDeposit("aio-order-2", 20_000);
  const unpaid = await createDeposit("aio-order-3", 20_000);
  const out = await cli(["deposit", "reject", rejected.transactionId, "--reason", "sender is not the customer", "--json"]);
  t.is(out.code, 0, out.stderr);
  const read = await signedFetch(gatewayUrl, merchant!, "GET", `/v1/deposit/${rejected.transactionId}`);
  t.like(read.json.data, { status: "failed", failureReason: "sender is not the customer" });
  let status = "pending";
  // DEPOSIT_TTL is 20 s: long enough that the CLI's start on a busy machine rejects a still-pending deposit.
  for (let i = 0; i < 400 && status === "pending"; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = ((await signedFetch(gatewayUrl, merchant!, "GET", `/v1/deposit?processId=aio-order-3`)).json.data as DepositRecord).status;
  }
  t.is(status, "expired", unpaid.transactionId);
});

test.serial("a sandbox merchant's deposit gets a seeded sandbox account and the checkout page's simulation pays it", async (t) => {
  const made = await cli(["merchant", "create", "--name", "Sandbox Shop", "--sandbox", "--json"]);
  t.is(made.code, 0, made.stderr);
  const creds = JSON.parse(made.stdout) as { merchantId: string; apiKey: string; apiSecret: string };
  const res = await signedFetch(gatewayUrl, creds, "POST", "/v1/deposit", { processId: "aio-sandbox-1", amount: 12_000, customer: { id: "c", name: "N", username: "u" } });
  t.is(res.status, 201, JSON.stringify(res.json));
  const deposit = res.json.data as DepositRecord;
  t.not(deposit.assignedAccount?.iban, LIVE_IBAN);
  // Paid before any slower CLI call: on a busy machine a CLI start can outlast DEPOSIT_TTL (20 s here).
  const token = new URL(deposit.checkoutUrl).searchParams.get("token")!;
  const simulated = await fetch(`${gatewayUrl}/checkout/simulate?token=${encodeURIComponent(token)}`, { method: "POST" });
  t.is(simulated.status, 200);
  const sandboxAccounts = (JSON.parse((await cli(["account", "list", "--sandbox", "--json"])).stdout) as { accounts: Array<{ iban: string }> }).accounts.map((a) => a.iban);
  t.true(sandboxAccounts.includes(deposit.assignedAccount!.iban), "pnpm start seeded the sandbox accounts");
  const read = await signedFetch(gatewayUrl, creds, "GET", `/v1/deposit/${deposit.transactionId}`);
  t.like(read.json.data, { status: "completed" });
  // A switch to live waits for a second operator; run when approved, it is refused all the same.
  const flip = await secondOperatorApproves(await cli(["merchant", "set-sandbox", creds.merchantId, "false"]));
  t.is(flip.code, 1, "a merchant with transactions cannot go live");
  t.regex(flip.stderr, /SANDBOX_CHANGE_REFUSED|cannot switch between sandbox and live/);
});

test.serial("deposit → operator confirm → balance → withdraw → the operator pays it out → completed, and `pnpm cli balance show` agrees", async (t) => {
  const creds = await liveMerchant("Payout Shop", "--ip", "127.0.0.1,::1");
  const deposit = await signedFetch(gatewayUrl, creds, "POST", "/v1/deposit", { processId: "aio-pay-in", amount: 90_000, customer: { id: "c", name: "N", username: "u" } });
  t.is(deposit.status, 201, JSON.stringify(deposit.json));
  // Straight over Connect, as an internal system would: a CLI process start could outlast DEPOSIT_TTL on a busy machine.
  await app.client(DepositService).confirmDeposit({ depositId: (deposit.json.data as DepositRecord).transactionId });
  // The credit follows the deposit_completed event through the outbox relay.
  let balances: unknown[] = [];
  for (let i = 0; i < 50; i++) {
    balances = ((await signedFetch(gatewayUrl, creds, "GET", "/v1/balance")).json.data as { balances: unknown[] }).balances;
    if (JSON.stringify(balances).includes("90000")) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.deepEqual(balances, [{ currency: "TRY", available: 90_000, held: 0 }]);

  const withdraw = await signedFetch(gatewayUrl, creds, "POST", "/v1/withdraw", { processId: "aio-pay-out", amount: 40_000, ...testPayee });
  t.is(withdraw.status, 201, JSON.stringify(withdraw.json));
  const id = (withdraw.json.data as { transactionId: string }).transactionId;
  // A live merchant's payout goes to the manual connector: it waits, processing, for an operator.
  let awaiting: Array<{ id: string }> = [];
  for (let i = 0; i < 100 && awaiting.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const listed = await cli(["withdrawal", "list", "--awaiting-operator", "--merchant", creds.merchantId, "--json"]);
    awaiting = (JSON.parse(listed.stdout) as { withdrawals: Array<{ id: string }> }).withdrawals;
  }
  t.deepEqual(
    awaiting.map((w) => w.id),
    [id],
  );
  const exported = await cli(["withdrawal", "export", "--awaiting-operator", "--format", "csv", "--merchant", creds.merchantId]);
  t.is(exported.code, 0, exported.stderr);
  t.true(exported.stdout.includes(`Elif Şahin,TR330006100519786457841326,400.00,${id}`), exported.stdout);
  t.is(((await signedFetch(gatewayUrl, creds, "GET", `/v1/withdraw/${id}`)).json.data as { status: string }).status, "processing");
  const paid = await cli(["withdrawal", "complete", id, "--bank-reference", "AKB-2026-0001"]);
  t.is(paid.code, 0, paid.stderr);
  t.is(((await signedFetch(gatewayUrl, creds, "GET", `/v1/withdraw/${id}`)).json.data as { status: string }).status, "completed");
  const shown = await cli(["balance", "show", "--merchant", creds.merchantId, "--json"]);
  t.is(shown.code, 0, shown.stderr);
  t.like(JSON.parse(shown.stdout), { balances: [{ currency: "TRY", available: 50_000, held: 0 }] });
});

test.serial("a merchant that sets a callback URL with the CLI gets its deposit's completion as a signed callback, listed at GET /v1/events", async (t) => {
  const receiver = await new CallbackReceiver().start();
  try {
    const creds = await liveMerchant("Callback Shop");
    const set = await cli(["merchant", "set-callback", creds.merchantId, receiver.url("/payments/cb")]);
    t.is(set.code, 0, set.stderr);
    const deposit = await signedFetch(gatewayUrl, creds, "POST", "/v1/deposit", { processId: "aio-cb", amount: 25_000, customer: { id: "c", name: "N", username: "u" } });
    const depositId = (deposit.json.data as DepositRecord).transactionId;
    await app.client(DepositService).confirmDeposit({ depositId });
    for (let i = 0; i < 100 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    t.is(receiver.received.length, 1);
    const callback = receiver.received[0]!;
    const verdict = verifyCallback({ secrets: creds.apiSecret, headers: callback.headers, body: callback.body, path: callback.path });
    t.true(verdict.ok, JSON.stringify(verdict));
    if (verdict.ok) t.like(verdict.event, { type: "deposit.completed", data: { transactionId: depositId, status: "completed", sequence: 2 } });
    let listed: { items: Array<{ id: string; deliveryStatus: string }> } = { items: [] };
    for (let i = 0; i < 50; i++) {
      listed = (await signedFetch(gatewayUrl, creds, "GET", "/v1/events")).json.data as typeof listed;
      if (listed.items[0]?.deliveryStatus === "delivered") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.like(listed.items, [{ id: String(callback.headers["x-event-id"]), deliveryStatus: "delivered" }]);
  } finally {
    await receiver.stop();
  }
});

test.serial("SIGTERM stops the process cleanly", async (t) => {
  const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
  server.kill("SIGTERM");
  t.is(await exited, 0);
});
