import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { type RunningServices } from "@payments/kit";
import { addTestReceivingAccounts, createServiceClient, eventually, rejectionOf as refusal } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// Sandbox money never becomes live money: every service of the money path in one process
// (SQLite, in-process bus), driven the ways a merchant, a customer and an operator can.
const dir = mkdtempSync(join(tmpdir(), "sandbox-live-"));
let running: RunningServices;
const client = <S extends Parameters<typeof createServiceClient>[0]>(service: S) => createServiceClient(service, running.server.url);

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "ef".repeat(32), PAYOUT_WORKER: "0" },
  });
  await addTestReceivingAccounts(client(BankCatalogService));
});

test.after.always(async () => {
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (running as typeof running | undefined)?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const customer = { id: "c", name: "Ayşe Yılmaz", username: "ayse" };

async function available(merchantId: string): Promise<bigint> {
  const { balances } = await client(PayoutService).getBalances({ merchantId });
  return balances.find((b) => b.currency === "TRY")?.available ?? 0n;
}

test.serial("a sandbox merchant's simulated payment credits its sandbox balance, and the merchant can then never be switched to live", async (t) => {
  const merchants = client(MerchantService);
  const merchantId = (await merchants.createMerchant({ name: "Sandbox Shop", sandbox: true })).merchant!.id;
  const { deposit } = await client(DepositService).createDeposit({ merchantId, processId: "sim-1", amount: 40_000n, customer });
  const paid = await client(DepositService).simulatePayment({ token: deposit!.checkoutToken });
  t.is(paid.deposit?.status, DepositStatus.COMPLETED);
  await eventually(async () => (await available(merchantId)) === 40_000n, "the sandbox credit");

  const refused = await refusal(merchants.setSandbox({ merchantId, sandbox: false }));
  t.like(refused, { code: Code.FailedPrecondition, reason: "SANDBOX_CHANGE_REFUSED" });
  t.true((await merchants.getMerchant({ merchantId })).merchant!.sandbox, "still sandbox");
});

test.serial("a live merchant's deposit cannot be simulated: refused, still pending, nothing credited", async (t) => {
  const merchantId = (await client(MerchantService).createMerchant({ name: "Live Shop", sandbox: false })).merchant!.id;
  const { deposit } = await client(DepositService).createDeposit({ merchantId, processId: "live-1", amount: 40_000n, customer });
  t.false(deposit!.sandbox);
  t.like(await refusal(client(DepositService).simulatePayment({ token: deposit!.checkoutToken })), { code: Code.PermissionDenied, reason: "SANDBOX_ONLY" });
  t.is((await client(DepositService).getDeposit({ merchantId, key: { case: "depositId", value: deposit!.id } })).deposit?.status, DepositStatus.PENDING);
  t.is(await available(merchantId), 0n);
});

test.serial("a sandbox deposit completed after its merchant became live (a switch racing the creation) never reaches the live balance", async (t) => {
  const merchantId = (await client(MerchantService).createMerchant({ name: "Racing Shop", sandbox: true })).merchant!.id;
  const { deposit } = await client(DepositService).createDeposit({ merchantId, processId: "race-1", amount: 25_000n, customer });
  t.true(deposit!.sandbox);
  // Only a race between the switch's checks and this creation could produce this state; the
  // merchant's row is written directly to stand in for it.
  await running.contexts.get("merchant")!.db("merchants").where({ id: merchantId }).update({ sandbox: false });
  t.like(await refusal(client(DepositService).simulatePayment({ token: deposit!.checkoutToken })), { reason: "SANDBOX_ONLY" }, "the checkout button is refused");
  // An operator's confirmation completes the sandbox deposit: its completion event reaches the payout service...
  const confirmed = await client(DepositService).confirmDeposit({ depositId: deposit!.id });
  t.is(confirmed.deposit?.status, DepositStatus.COMPLETED);
  // ...which refuses to credit sandbox money to a live merchant.
  const payoutDb = running.contexts.get("payout")!.db;
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(await available(merchantId), 0n);
  t.deepEqual(await payoutDb("ledger_entries").where({ merchant_id: merchantId }).select("id"), [], "no ledger entry at all");
});
