import { create as createMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { TestFn } from "ava";
import { TRANSFER_RETURN_COMPLETED_TOPIC, TRANSFER_RETURN_FAILED_TOPIC } from "@payments/contracts";
import { PayoutService, TransferReturnChangedSchema, TransferReturnStatus, type TransferReturnChanged } from "@payments/contracts/payout";
import { type RunningServices } from "@payments/kit";
import type { BankConnector, PayoutInstruction } from "../src/bank-connector.js";
import { createManualConnector, createSandboxConnector } from "../src/index.js";
import type { TransferReturnRow } from "../src/transfer-returns.js";
import { takeReturnRequest } from "../src/transfer-return-requests.js";
import { TransferReturnRequestedSchema } from "@payments/contracts/deposit";
import { payoutContext } from "./worker-fixtures.js";
import { createServiceClient, eventually, rejectionOf, TEST_APPROVER, testOperator, turkishIban, TEST_OPERATOR_ENV } from "@payments/testing";

// Transfer returns, the same tests on MySQL (transfer-returns-mysql.test.ts) and SQLite
// (transfer-returns-sqlite.test.ts): one payout process with its worker on, the real sandbox
// connector (10 ms) and the real manual connector as the live one, each behind a recorder.
// Serial: the last test checks that nothing any of them did reached the ledger.

export const SANDBOX = {
  notFound: "TR400006200000000000000001",
  undecided: "TR830006200000000000000003",
  closed: "TR560006200000000000000004",
};
export const ORDINARY = turkishIban("0001000000000098765432");

/** What each connector was handed, by idempotency key. */
export interface Sent {
  sandbox: PayoutInstruction[];
  live: PayoutInstruction[];
}

function recorded(connector: BankConnector, into: PayoutInstruction[]): BankConnector {
  return {
    name: connector.name,
    send: (instruction) => {
      into.push({ ...instruction });
      return connector.send(instruction);
    },
  };
}

export function recordingConnectors(sent: Sent): { sandboxConnector: BankConnector; liveConnector: BankConnector } {
  return { sandboxConnector: recorded(createSandboxConnector({ delayMs: 10 }), sent.sandbox), liveConnector: recorded(createManualConnector(), sent.live) };
}

/**
 * The payout service alone: a return needs no merchant, bank or deposit, so the merchant and
 * bank-catalog services it would ask about withdrawals are never called (nothing listens there).
 */
export const WORKER_ENV = { MERCHANT_SERVICE_URL: "http://127.0.0.1:9", BANK_CATALOG_SERVICE_URL: "http://127.0.0.1:9", GRPC_PORT: "0", LOG_LEVEL: "error", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", PAYOUT_RESEND_AFTER: "1m", ...TEST_OPERATOR_ENV };

/** Every TransferReturnChanged in the payout outbox, oldest first, with its topic. */
export async function returnEvents(running: RunningServices): Promise<Array<TransferReturnChanged & { topic: string }>> {
  const rows = (await payoutContext(running).db("outbox").where("topic", "like", "payout.v1.transfer_return_%").select("topic", "payload").orderBy("seq")) as Array<{ topic: string; payload: Buffer }>;
  return rows.map((row) => Object.assign(fromBinary(TransferReturnChangedSchema, new Uint8Array(row.payload)), { topic: row.topic }));
}

export function transferReturnSuite(test: TestFn, services: () => RunningServices, sent: Sent): void {
  const client = () => createServiceClient(PayoutService, services().server.url);
  /** A finance operator: the actor a return records is the subject of their assertion. */
  const clientAs = (actor: string) => createServiceClient(PayoutService, services().server.url, { operator: testOperator("finance", actor) });
  const rows = async (ids: readonly string[]) => (await payoutContext(services()).db("transfer_returns").whereIn("id", ids)) as TransferReturnRow[];
  const settled = (ids: readonly string[], what: string) =>
    eventually(async () => (await rows(ids)).every((r) => r.status === "completed" || r.status === "failed" || (r.status === "processing" && Boolean(r.awaiting_operator))), what, 15_000);
  let n = 0;
  const create = (overrides: Partial<{ transferId: string; iban: string; amount: bigint; sandbox: boolean; currency: string }> = {}) =>
    clientAs("operator-ayse").createTransferReturn({
      transferId: overrides.transferId ?? `trf_${++n}_${Date.now().toString(36)}`,
      iban: overrides.iban ?? ORDINARY,
      recipientName: "Zeynep Kaya",
      amount: overrides.amount ?? 12_345n,
      currency: overrides.currency ?? "",
      sandbox: overrides.sandbox ?? true,
      reason: "no deposit matches it",
      actor: "operator-ayse",
    });

  test.serial("a sandbox return is sent to the sandbox connector and completed or failed by the test IBAN table, each with its event in the outbox", async (t) => {
    const paid = (await create({ iban: ORDINARY.toLowerCase().replace(/(.{4})/g, "$1 ") })).transferReturn!;
    const closed = (await create({ iban: SANDBOX.closed })).transferReturn!;
    const undecided = (await create({ iban: SANDBOX.undecided })).transferReturn!;
    t.like(paid, { status: TransferReturnStatus.PENDING, iban: ORDINARY, sandbox: true, attempt: 1, currency: "TRY", amount: 12_345n, actor: "operator-ayse" });
    t.true(paid.id.startsWith("trr_"));
    await settled([paid.id, closed.id, undecided.id], "the sandbox bank's answers");

    const byId = new Map((await rows([paid.id, closed.id, undecided.id])).map((r) => [r.id, r]));
    t.like(byId.get(paid.id), { status: "completed", bank_reference: `SANDBOX-${paid.id}`, dispatch_attempts: 1 });
    t.like(byId.get(closed.id), { status: "failed", failure_reason: "ACCOUNT_CLOSED" });
    t.like(byId.get(undecided.id), { status: "processing" });
    t.truthy(byId.get(paid.id)?.completed_at);
    // The sandbox connector got them, with the return's id as the key and the transfer on the statement.
    const instruction = sent.sandbox.find((i) => i.idempotencyKey === paid.id);
    t.like(instruction, { iban: ORDINARY, amount: 12_345, currency: "TRY", accountName: "Zeynep Kaya", description: `RETURN ${paid.transferId}` });
    t.false(sent.live.some((i) => [paid.id, closed.id, undecided.id].includes(i.idempotencyKey)));

    const events = await returnEvents(services());
    const of = (id: string) => events.filter((e) => e.transferReturn?.id === id).map((e) => [e.topic, TransferReturnStatus[e.transferReturn!.status]]);
    t.deepEqual(of(paid.id), [[TRANSFER_RETURN_COMPLETED_TOPIC, "COMPLETED"]]);
    t.deepEqual(of(closed.id), [[TRANSFER_RETURN_FAILED_TOPIC, "FAILED"]]);
    t.deepEqual(of(undecided.id), []);
    const completedEvent = events.find((e) => e.transferReturn?.id === paid.id)!;
    t.truthy(completedEvent.eventId);
    t.truthy(completedEvent.occurredAt);
    t.like(completedEvent.transferReturn, { transferId: paid.transferId, bankReference: `SANDBOX-${paid.id}`, awaitingOperator: false });
  });

  test.serial("a live return goes to the manual connector and waits for an operator, who completes it or fails it (events); a failed one may be returned again", async (t) => {
    const toComplete = (await create({ sandbox: false })).transferReturn!;
    const toFail = (await create({ sandbox: false, iban: SANDBOX.closed })).transferReturn!;
    await settled([toComplete.id, toFail.id], "both accepted by the manual connector");
    t.deepEqual(sent.live.filter((i) => [toComplete.id, toFail.id].includes(i.idempotencyKey)).map((i) => i.idempotencyKey).sort(), [toComplete.id, toFail.id].sort());
    t.false(sent.sandbox.some((i) => [toComplete.id, toFail.id].includes(i.idempotencyKey)));

    const waiting = await client().listTransferReturns({ awaitingOperator: true, limit: 100 });
    t.deepEqual(waiting.transferReturns.filter((r) => !r.sandbox).map((r) => r.id).sort(), [toComplete.id, toFail.id].sort());
    t.true(waiting.transferReturns.every((r) => r.awaitingOperator && r.status === TransferReturnStatus.PROCESSING));

    const completed = (await client().completeTransferReturn({ id: toComplete.id, bankReference: "  EFT-RET-1 " })).transferReturn!;
    t.like(completed, { status: TransferReturnStatus.COMPLETED, bankReference: "EFT-RET-1", awaitingOperator: false });
    t.truthy(completed.completedAt);
    const failed = (await client().failTransferReturn({ id: toFail.id, reason: "account closed, says the bank" })).transferReturn!;
    t.like(failed, { status: TransferReturnStatus.FAILED, failureReason: "account closed, says the bank" });

    // Decided once: a second decision is refused and changes nothing.
    t.like(await rejectionOf(client().failTransferReturn({ id: toComplete.id, reason: "late" })), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE" });
    t.like(await rejectionOf(client().completeTransferReturn({ id: toFail.id, bankReference: "X" })), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE" });

    const events = await returnEvents(services());
    t.deepEqual(events.filter((e) => e.transferReturn?.id === toComplete.id).map((e) => [e.topic, e.transferReturn!.bankReference]), [[TRANSFER_RETURN_COMPLETED_TOPIC, "EFT-RET-1"]]);
    t.deepEqual(events.filter((e) => e.transferReturn?.id === toFail.id).map((e) => [e.topic, e.transferReturn!.failureReason]), [[TRANSFER_RETURN_FAILED_TOPIC, "account closed, says the bank"]]);

    // After the failure the transfer may be returned again (a new attempt, perhaps to a corrected IBAN).
    const again = await create({ transferId: toFail.transferId, sandbox: false });
    t.true(again.created);
    t.like(again.transferReturn, { transferId: toFail.transferId, attempt: 2, status: TransferReturnStatus.PENDING, iban: ORDINARY });
    t.not(again.transferReturn!.id, toFail.id);
    const attempts = await client().listTransferReturns({ transferId: toFail.transferId });
    t.deepEqual(attempts.transferReturns.map((r) => r.attempt).sort(), [1, 2]);
    await settled([again.transferReturn!.id], "the second attempt accepted");
    await client().completeTransferReturn({ id: again.transferReturn!.id, bankReference: "EFT-RET-2" });
  });

  test.serial("CreateTransferReturn is idempotent by transfer_id: a repeat, even racing, answers the open or completed return", async (t) => {
    const transferId = `trf_idem_${Date.now().toString(36)}`;
    const first = await create({ transferId, sandbox: false });
    t.true(first.created);
    const repeat = await create({ transferId, sandbox: false, amount: 99n });
    t.false(repeat.created);
    t.is(repeat.transferReturn!.id, first.transferReturn!.id);
    t.is(repeat.transferReturn!.amount, 12_345n, "the repeat's other fields are ignored");

    const racing = `trf_race_${Date.now().toString(36)}`;
    const answers = await Promise.all(Array.from({ length: 6 }, () => create({ transferId: racing })));
    t.is(new Set(answers.map((a) => a.transferReturn!.id)).size, 1);
    t.is(answers.filter((a) => a.created).length, 1);
    await settled([answers[0]!.transferReturn!.id], "the raced one completed");
    const afterCompletion = await create({ transferId: racing });
    t.false(afterCompletion.created);
    t.like(afterCompletion.transferReturn, { id: answers[0]!.transferReturn!.id, status: TransferReturnStatus.COMPLETED });
    t.is(Number(((await payoutContext(services()).db("transfer_returns").where({ transfer_id: racing }).count({ n: "*" }).first()) as { n: number | string }).n), 1);
    t.is(sent.sandbox.filter((i) => i.idempotencyKey === answers[0]!.transferReturn!.id).length, 1);

    await settled([first.transferReturn!.id], "the live one accepted");
    await client().failTransferReturn({ id: first.transferReturn!.id, reason: "test cleanup" });
  });

  test.serial("bad requests are refused before anything is stored: IBAN, amount, currency, required fields; unknown ids, undecidable returns", async (t) => {
    const count = async () => Number(((await payoutContext(services()).db("transfer_returns").count({ n: "*" }).first()) as { n: number | string }).n);
    const before = await count();
    t.like(await rejectionOf(create({ iban: "DE89370400440532013000" })), { code: Code.InvalidArgument, reason: "INVALID_IBAN", field: "iban" });
    t.like(await rejectionOf(create({ iban: "TR000006200000000000000001" })), { reason: "INVALID_IBAN", field: "iban" });
    t.like(await rejectionOf(create({ iban: "" })), { reason: "VALIDATION_ERROR", field: "iban" });
    t.like(await rejectionOf(create({ amount: 0n })), { reason: "VALIDATION_ERROR", field: "amount" });
    t.like(await rejectionOf(create({ amount: -5n })), { reason: "VALIDATION_ERROR", field: "amount" });
    t.like(await rejectionOf(create({ currency: "XYZ" })), { reason: "VALIDATION_ERROR", field: "currency" });
    t.like(await rejectionOf(create({ transferId: "" })), { reason: "VALIDATION_ERROR", field: "transfer_id" });
    const base = { transferId: "trf_v", iban: ORDINARY, recipientName: "Zeynep Kaya", amount: 1n, currency: "", sandbox: true, reason: "r", actor: "a" };
    t.like(await rejectionOf(client().createTransferReturn({ ...base, reason: "" })), { reason: "VALIDATION_ERROR", field: "reason" });
    t.like(await rejectionOf(client().createTransferReturn({ ...base, recipientName: "" })), { reason: "VALIDATION_ERROR", field: "recipient_name" });
    t.is(await count(), before);

    t.like(await rejectionOf(client().completeTransferReturn({ id: "trr_nope", bankReference: "X" })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
    t.like(await rejectionOf(client().failTransferReturn({ id: "trr_nope", reason: "x" })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
    t.like(await rejectionOf(client().completeTransferReturn({ id: "trr_nope", bankReference: " " })), { reason: "VALIDATION_ERROR", field: "bank_reference" });
    t.like(await rejectionOf(client().failTransferReturn({ id: "trr_nope", reason: "" })), { reason: "VALIDATION_ERROR", field: "reason" });
    t.like(await rejectionOf(client().listTransferReturns({ status: 42 as TransferReturnStatus })), { reason: "VALIDATION_ERROR", field: "status" });
    t.like(await rejectionOf(client().listTransferReturns({ cursor: "nonsense" })), { reason: "VALIDATION_ERROR", field: "cursor" });

    // A return handed to the bank whose answer is still awaited is not the operator's to decide.
    const inFlight = (await create({ sandbox: false })).transferReturn!;
    await settled([inFlight.id], "accepted");
    const db = payoutContext(services()).db;
    await db("transfer_returns").where({ id: inFlight.id }).update({ awaiting_operator: false, dispatched_at: payoutContext(services()).clock.now().getTime() });
    t.like(await rejectionOf(client().completeTransferReturn({ id: inFlight.id, bankReference: "X" })), { code: Code.FailedPrecondition, reason: "BANK_ANSWER_PENDING" });
    t.like(await rejectionOf(client().failTransferReturn({ id: inFlight.id, reason: "x" })), { reason: "BANK_ANSWER_PENDING" });
    await db("transfer_returns").where({ id: inFlight.id }).update({ awaiting_operator: true });
    t.like((await client().failTransferReturn({ id: inFlight.id, reason: "test cleanup" })).transferReturn, { status: TransferReturnStatus.FAILED });
  });

  test.serial("a TransferReturnRequested event makes its attempt exactly once, however often it is delivered; an unpayable one is recorded failed with its event", async (t) => {
    const ctx = payoutContext(services());
    const transferId = `trf_evt_${Date.now().toString(36)}`;
    const request = (attempt: number, iban = ORDINARY) =>
      toBinary(
        TransferReturnRequestedSchema,
        createMessage(TransferReturnRequestedSchema, { eventId: `evt_${attempt}_${iban}`, transferId, attempt, iban, recipientName: "Fatma Şahin", amount: 5_000n, currency: "TRY", sandbox: true, reason: "late payment", actor: "rules" }),
      );
    // Delivered three times, twice at once: one attempt.
    await Promise.all([takeReturnRequest(ctx, request(1)), takeReturnRequest(ctx, request(1))]);
    await takeReturnRequest(ctx, request(1));
    const attempts = async () => (await payoutContext(services()).db("transfer_returns").where({ transfer_id: transferId }).orderBy("attempt")) as TransferReturnRow[];
    t.deepEqual((await attempts()).map((r) => [Number(r.attempt), r.recipient_name, r.actor]), [[1, "Fatma Şahin", "rules"]]);
    await settled((await attempts()).map((r) => r.id), "attempt 1 to be paid by the sandbox bank");

    // An IBAN that is not Turkish cannot be paid: attempt 2 is recorded failed at once, with the event the deposit service settles on.
    const before = (await returnEvents(services())).length;
    await takeReturnRequest(ctx, request(2, "DE89370400440532013000"));
    await takeReturnRequest(ctx, request(2, "DE89370400440532013000"));
    const second = (await attempts())[1]!;
    t.like(second, { attempt: 2, status: "failed", failure_reason: "INVALID_IBAN" });
    const events = (await returnEvents(services())).slice(before);
    t.deepEqual(
      events.map((e) => [e.topic, e.transferReturn?.transferId, e.transferReturn?.attempt]),
      [[TRANSFER_RETURN_FAILED_TOPIC, transferId, 2]],
      "one failed event for the refused attempt, however often it was asked",
    );
    t.is((await attempts()).length, 2);
    t.is(sent.sandbox.filter((i) => i.idempotencyKey.includes(second.id)).length, 0, "the refused attempt never reached a connector");
  });

  test.serial("listing: newest first, paged with a cursor, filtered by status", async (t) => {
    const all: string[] = [];
    let cursor = "";
    do {
      const page = await client().listTransferReturns({ limit: 2, cursor });
      t.true(page.transferReturns.length <= 2);
      all.push(...page.transferReturns.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor !== "");
    const total = Number(((await payoutContext(services()).db("transfer_returns").count({ n: "*" }).first()) as { n: number | string }).n);
    t.is(all.length, total);
    t.is(new Set(all).size, total);
    const failed = await client().listTransferReturns({ status: TransferReturnStatus.FAILED, limit: 100 });
    t.true(failed.transferReturns.length > 0);
    t.true(failed.transferReturns.every((r) => r.status === TransferReturnStatus.FAILED));
  });

  test.serial("no return, whatever its outcome, ever wrote a ledger entry or touched a balance", async (t) => {
    const db = payoutContext(services()).db;
    t.true(Number(((await db("transfer_returns").count({ n: "*" }).first()) as { n: number | string }).n) > 5);
    t.deepEqual(await db("ledger_entries").select("id"), []);
    t.deepEqual(await db("balances").select("merchant_id"), []);
  });

  test.serial("a return records the operator whose assertion came with the call, not the request's actor (a blank one is not refused); a live one, its maker and its approver", async (t) => {
    const request = { iban: ORDINARY, recipientName: "Zeynep Kaya", amount: 1_000n, currency: "", reason: "no deposit matches it" };
    const sandbox = (await clientAs("operator-ayse").createTransferReturn({ ...request, transferId: `trf_actor_${Date.now().toString(36)}`, sandbox: true, actor: "  " })).transferReturn!;
    t.is(sandbox.actor, "operator-ayse");
    const live = (await clientAs("operator-ayse").createTransferReturn({ ...request, transferId: `trf_actor_live_${Date.now().toString(36)}`, sandbox: false, actor: "someone-else" })).transferReturn!;
    t.is(live.actor, `operator-ayse, approved by ${TEST_APPROVER.subject}`);
    await settled([sandbox.id, live.id], "both with their bank");
    await client().failTransferReturn({ id: live.id, reason: "test cleanup" });
  });
}
