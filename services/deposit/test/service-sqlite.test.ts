import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { merchantModule } from "@payments/merchant-service";
import { createServiceClient, errorInfo, startServices, type RunningServices } from "@payments/kit";
import { manualClock } from "@payments/kit/testing";
import { depositModule } from "../src/index.js";

// The embedded mode of `pnpm start`: SQLite files and the in-process bus.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "deposit-sqlite-"));
let running: RunningServices;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

test.before(async () => {
  running = await startServices([merchantModule, bankCatalogModule, depositModule], {
    mode: "all-in-one",
    clock,
    env: { DATA_DIR: dir, GRPC_PORT: "0", LOG_LEVEL: "warn", MASTER_KEY: "cd".repeat(32), DEPOSIT_TTL: "10s" },
  });
  deposits = createServiceClient(DepositService, running.server.url);
  merchants = createServiceClient(MerchantService, running.server.url);
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function failure(call: Promise<unknown>) {
  try {
    await call;
  } catch (err) {
    return errorInfo(err);
  }
  throw new Error("the call succeeded but was expected to fail");
}

test.serial("on SQLite a deposit is created, found by id and by processId, and DEPOSIT_TTL sets its expiry", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Lite Shop", sandbox: true });
  const { deposit } = await deposits.createDeposit({ merchantId: merchant!.id, processId: "lite-1", amount: 10_000n, bankId: "FAST", customer: { id: "c", name: "N", username: "u" } });
  t.is(Number(deposit!.expiresAt!.seconds - deposit!.createdAt!.seconds), 10);
  t.is(deposit?.bankId, "FAST");
  const byProcess = await deposits.getDeposit({ merchantId: merchant!.id, key: { case: "processId", value: "lite-1" } });
  t.is(byProcess.deposit?.id, deposit!.id);
  t.like(await failure(deposits.getDeposit({ key: { case: "processId", value: "lite-1" } })), { reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.like(await failure(deposits.getDeposit({ merchantId: "mch_other", key: { case: "depositId", value: deposit!.id } })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
  t.like(await failure(deposits.getDeposit({})), { reason: "VALIDATION_ERROR", field: "deposit_id" });
  t.like(await failure(deposits.getDeposit({ key: { case: "depositId", value: "d".repeat(41) } })), { reason: "VALIDATION_ERROR", field: "deposit_id" });
});

test.serial("listing is newest first, pages with an opaque cursor without gaps or repeats, and filters by status and time", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Paging Shop", sandbox: true });
  const merchantId = merchant!.id;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    // Two deposits share each millisecond: the id breaks the tie.
    if (i % 2 === 0) clock.advance(1000);
    const { deposit } = await deposits.createDeposit({ merchantId, processId: `page-${i}`, amount: 10_000n, customer: { id: "c", name: "N", username: "u" } });
    ids.push(deposit!.id);
  }
  const seen: string[] = [];
  let cursor = "";
  let pages = 0;
  do {
    const page = await deposits.listDeposits({ merchantId, limit: 2, cursor });
    seen.push(...page.deposits.map((d) => d.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== "");
  t.is(pages, 3);
  t.deepEqual([...seen].sort(), [...ids].sort());
  const times = (await deposits.listDeposits({ merchantId })).deposits.map((d) => Number(d.createdAt!.seconds));
  t.deepEqual(times, [...times].sort((a, b) => b - a));

  await deposits.cancelDeposit({ merchantId, depositId: ids[0]! });
  const cancelled = await deposits.listDeposits({ merchantId, status: DepositStatus.CANCELLED });
  t.deepEqual(cancelled.deposits.map((d) => d.id), [ids[0]]);
  const first = (await deposits.getDeposit({ key: { case: "depositId", value: ids[0]! } })).deposit!;
  const early = await deposits.listDeposits({ merchantId, createdTo: timestampFromMs(Number(first.createdAt!.seconds) * 1000 + 1) });
  t.true(early.deposits.every((d) => d.createdAt!.seconds <= first.createdAt!.seconds));
  t.like(await failure(deposits.listDeposits({ merchantId, cursor: "not-a-cursor" })), { reason: "VALIDATION_ERROR", field: "cursor" });
  t.like(await failure(deposits.listDeposits({ merchantId, limit: 101 })), { reason: "VALIDATION_ERROR", field: "limit" });
});

test.serial("on SQLite the expiry job expires an unpaid deposit once its DEPOSIT_TTL has passed", async (t) => {
  const { merchant } = await merchants.createMerchant({ name: "Expiry Shop", sandbox: true });
  const { deposit } = await deposits.createDeposit({ merchantId: merchant!.id, processId: "exp-1", amount: 10_000n, customer: { id: "c", name: "N", username: "u" } });
  clock.advance(10_000);
  const deadline = Date.now() + 5000;
  let status = DepositStatus.PENDING;
  while (status === DepositStatus.PENDING && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = (await deposits.getDeposit({ key: { case: "depositId", value: deposit!.id } })).deposit!.status;
  }
  t.is(status, DepositStatus.EXPIRED);
});
