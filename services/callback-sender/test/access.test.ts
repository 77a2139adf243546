import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Code } from "@connectrpc/connect";
import { CallbackService } from "@payments/contracts/callback";
import { AuditService } from "@payments/contracts/operator";
import type { RunningServices } from "@payments/kit";
import { createServiceClient, rejectionOf, testOperator } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { FAST_SENDER } from "./fixtures.js";

// Who may redeliver callbacks: the gateway redelivers a merchant's own event without an operator;
// redelivering every failed event is support's, needs no second person, and is audited. SQLite.
const dir = mkdtempSync(join(tmpdir(), "callbacks-access-"));
let running: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "callback-sender"], { env: { DATA_DIR: dir, MASTER_KEY: "c".repeat(64), LOG_LEVEL: "fatal", ...FAST_SENDER } });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => running!.server.url;
const since = { seconds: 0n, nanos: 0 };

test("redelivering failed events is support's, on one operator, and audited under the verified subject; a viewer and a caller without an assertion are refused", async (t) => {
  const support = testOperator("support", "support-ayse@example.com");
  const done = await createServiceClient(CallbackService, url(), { operator: support, approver: null }).redeliverFailedEvents({ merchantId: "mer_none", since });
  t.is(done.count, 0);
  t.like(await rejectionOf(createServiceClient(CallbackService, url(), { operator: testOperator("viewer") }).redeliverFailedEvents({ merchantId: "mer_none", since })), { code: Code.PermissionDenied });
  t.like(await rejectionOf(createServiceClient(CallbackService, url(), { operator: null, workload: null }).redeliverFailedEvents({ merchantId: "mer_none", since })), { code: Code.Unauthenticated });

  const { records } = await createServiceClient(AuditService, url(), { operator: testOperator("viewer"), service: "callback-sender" }).listAuditRecords({ targetId: "mer_none", limit: 10 });
  t.deepEqual(
    records.map((r) => `${r.actor} ${r.outcome}`).sort(),
    [" UNAUTHENTICATED", `${support.subject} ok`, "test-viewer@example.com PERMISSION_DENIED"],
  );
});

test("the gateway redelivers a merchant's own event for the merchant, without an operator: its refusal is the event's, not UNAUTHENTICATED", async (t) => {
  const info = await rejectionOf(createServiceClient(CallbackService, url(), { operator: null, merchant: "mer_none" }).redeliverEvent({ merchantId: "mer_none", eventId: "evt_none" }));
  t.not(info.code, Code.Unauthenticated);
  t.not(info.code, Code.PermissionDenied);
});
