import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { addTestReceivingAccounts, CallbackReceiver, createServiceClient, eventuallyValue } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CallbackService, DeliveryStatus } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { verifyCallback } from "@payments/signing";
import { FAST_SENDER } from "./fixtures.js";

// All-in-one storage (`pnpm start`): SQLite files and the in-process bus, the same code.
test("on SQLite with the in-process bus, a status change is delivered signed, retried after a 500", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "callbacks-sqlite-"));
  const receiver = await new CallbackReceiver((_, arrival) => (arrival === 1 ? { status: 500 } : { status: 200 })).start();
  const services = await startInProcess(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: "c".repeat(64), LOG_LEVEL: "error", ...FAST_SENDER },
  });
  try {
    const url = services.server.url;
    await addTestReceivingAccounts(createServiceClient(BankCatalogService, url));
    const created = await createServiceClient(MerchantService, url).createMerchant({ name: "SQLite Shop", callbackUrl: receiver.url() });
    const merchantId = created.merchant!.id;
    const deposits = createServiceClient(DepositService, url);
    const { deposit } = await deposits.createDeposit({ merchantId, processId: "sqlite-1", amount: 5_000n, customer: { id: "c", name: "Can", username: "can" } });
    await deposits.confirmDeposit({ depositId: deposit!.id });
    const callbacks = createServiceClient(CallbackService, url);
    const event = await eventuallyValue(async () => {
      const [event] = (await callbacks.listEvents({ merchantId })).events;
      return event?.deliveryStatus === DeliveryStatus.DELIVERED ? event : undefined;
    }, "delivered", 20_000);
    t.deepEqual(
      event.attempts.map((a) => [a.statusCode, a.outcome]),
      [
        [500, "retry"],
        [200, "delivered"],
      ],
    );
    const last = receiver.received.at(-1)!;
    const verdict = verifyCallback({ secrets: created.apiSecret, headers: last.headers, body: last.body, path: last.path });
    t.true(verdict.ok);
    if (verdict.ok) t.like(verdict.event, { type: "deposit.completed", data: { transactionId: deposit!.id, sequence: 2 } });
  } finally {
    await services.stop();
    await receiver.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
