import test from "ava";
import { eventuallyValue, spawnAllInOne, testPayee, type AllInOneProcess } from "@payments/testing";
import { PaymentsClient, PaymentsError, type Deposit } from "../src/index.js";

// The SDK against a real gateway: the all-in-one process (embedded SQLite, as `pnpm start`),
// merchants made with `pnpm cli merchant create`, every call through PaymentsClient.

let app: AllInOneProcess;
let gatewayUrl = "";

test.before(async () => {
  app = await spawnAllInOne({ SANDBOX_PAYOUT_DELAY: "50ms", PAYOUT_WORKER_INTERVAL: "100ms" });
  gatewayUrl = app.gatewayUrl;
});

// Unset when the before hook failed.
test.after.always(() => (app as AllInOneProcess | undefined)?.stop());

async function cli(args: string[]): Promise<string> {
  const result = await app.cli(args);
  if (result.code !== 0) throw new Error(`pnpm cli ${args.join(" ")}: ${result.code}\n${result.stderr}`);
  return result.stdout;
}

async function merchantClient(name: string, sandbox: boolean): Promise<PaymentsClient> {
  const args = ["merchant", "create", "--name", name, "--ip", "127.0.0.1,::1", "--json", ...(sandbox ? ["--sandbox"] : [])];
  let creds: { apiKey: string; apiSecret: string };
  if (sandbox) creds = JSON.parse((await cli(args)).trim()) as typeof creds;
  else {
    // A live merchant is made by two admins: the second, approving, is shown its secrets once.
    const asked = await app.cli(args);
    const approvalId = /"approvalId":"(apr_[^"]+)"/.exec(asked.stderr)?.[1];
    if (!approvalId) throw new Error(`no approval asked for: ${asked.stderr}`);
    const approved = await app.cli(["approval", "approve", approvalId, "--json"], { PAYMENTS_OPERATOR: "second-admin" });
    if (approved.code !== 0) throw new Error(approved.stderr);
    creds = (JSON.parse(approved.stdout) as { merchant: typeof creds }).merchant;
  }
  return new PaymentsClient({ baseUrl: gatewayUrl, apiKey: creds.apiKey, apiSecret: creds.apiSecret, retryBaseDelayMs: 50 });
}

const customer = { id: "cus_1", name: "Elif Şahin", username: "elif" };

test.serial("a sandbox merchant: banks, a deposit created, read, cancelled, another paid in the sandbox, a withdrawal, every transaction over pages", async (t) => {
  const client = await merchantClient("SDK Sandbox Shop", true);

  const { banks } = await client.availableBanks();
  t.true(banks.length > 0);
  const bank = banks.find((b) => b._id !== "FAST")!;
  t.regex(bank.logo ?? "", /^https?:\/\//);

  const created = await client.createDeposit({ processId: "sdk-dep-1", amount: 15_000, bankCode: bank._id, customer, metadata: { cart: 7 } });
  t.like(created, { processId: "sdk-dep-1", amount: 15_000, currency: "TRY", status: "pending" });
  t.regex(created.checkoutUrl, /token=/);
  t.deepEqual(await client.getDeposit(created.transactionId), created);
  t.is((await client.getDepositByProcessId("sdk-dep-1")).transactionId, created.transactionId);
  t.is((await client.cancelDeposit(created.transactionId)).status, "cancelled");

  const duplicate = await t.throwsAsync(client.createDeposit({ processId: "sdk-dep-1", amount: 15_000, customer }), { instanceOf: PaymentsError });
  t.like(duplicate, { status: 400, code: "DUPLICATE_TRANSACTION", details: { transactionId: created.transactionId }, attempts: 1 });
  t.regex(duplicate.requestId ?? "", /\S/);

  const missing = await t.throwsAsync(client.getDeposit("dep_doesnotexist"), { instanceOf: PaymentsError });
  t.like(missing, { status: 404 });

  // Paid through the sandbox helper: completed, and the sandbox balance is credited.
  const paid = await client.createDeposit({ processId: "sdk-dep-2", amount: 90_000, customer });
  const completed = await client.sandbox.payDeposit(paid.transactionId, { senderName: "ELIF SAHIN" });
  t.is(completed.status, "completed");
  const balance = await eventuallyValue(() => client.balance(), (b) => b.balances.some((x) => x.available === 90_000), "the sandbox credit", 10_000, 100);
  t.like(balance.balances[0], { currency: "TRY", available: 90_000 });

  const unpaid = await client.createDeposit({ processId: "sdk-dep-3", amount: 20_000, customer });
  t.is((await client.sandbox.expireDeposit(unpaid.transactionId)).status, "expired");

  const withdrawal = await client.createWithdrawal({ processId: "sdk-wd-1", amount: 40_000, ...testPayee });
  t.like(withdrawal, { processId: "sdk-wd-1", amount: 40_000 });
  t.is((await client.getWithdrawal(withdrawal.transactionId)).processId, "sdk-wd-1");
  t.is((await client.getWithdrawalByProcessId("sdk-wd-1")).transactionId, withdrawal.transactionId);

  // More deposits, then every transaction page by page (3 a page): each exactly once, newest first.
  for (let i = 4; i <= 8; i++) await client.createDeposit({ processId: `sdk-dep-${i}`, amount: 10_000 + i, customer });
  const listing = client.transactions({ limit: 3 });
  const pages: number[] = [];
  for await (const page of listing.pages()) pages.push(page.items.length);
  t.true(pages.length >= 3, JSON.stringify(pages));
  const all = [];
  for await (const tx of listing) all.push(tx);
  const ids = all.map((tx) => tx.processId);
  t.is(new Set(ids).size, ids.length, "no transaction twice");
  t.deepEqual([...ids].sort(), ["sdk-dep-1", "sdk-dep-2", "sdk-dep-3", "sdk-dep-4", "sdk-dep-5", "sdk-dep-6", "sdk-dep-7", "sdk-dep-8", "sdk-wd-1"]);
  t.is(all.length, pages.reduce((a, b) => a + b, 0));
  const deposits = await client.transactions({ type: "deposit", status: "pending", limit: 2 }).toArray();
  t.deepEqual(deposits.map((d) => d.processId).sort(), ["sdk-dep-4", "sdk-dep-5", "sdk-dep-6", "sdk-dep-7", "sdk-dep-8"]);

  // No callback URL is set, so the event log may be empty; the listing still answers.
  t.true(Array.isArray(await client.events({ limit: 5 }).toArray(10)));
});

test.serial("a live merchant: the sandbox helpers are refused with 403 SANDBOX_ONLY; wrong credentials are INVALID_SIGNATURE", async (t) => {
  const client = await merchantClient("SDK Live Shop", false);
  const error = await t.throwsAsync(client.sandbox.payDeposit("dep_any"), { instanceOf: PaymentsError });
  t.like(error, { status: 403, code: "SANDBOX_ONLY" });

  const wrong = new PaymentsClient({ baseUrl: gatewayUrl, apiKey: "pk_unknown", apiSecret: "sk_wrong" });
  const refused = await t.throwsAsync(wrong.balance(), { instanceOf: PaymentsError });
  t.is(refused.status, 401);
  t.is(refused.attempts, 1, "a 401 is not retried");
});

export type { Deposit };
