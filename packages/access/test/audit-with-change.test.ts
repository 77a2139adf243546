import test from "ava";
import { Code } from "@connectrpc/connect";
import { AuditService } from "@payments/contracts/operator";
import { createServiceClient, rejectionOf, testOperator } from "@payments/testing";
import { ANSWERS_TABLE, AUDIT_TABLE, HEAD_TABLE } from "../src/index.js";
import { startWidgetService, verifyChain, widgets, WIDGETS, type WidgetService } from "./audit-fixture.js";

// The audit row of a person's mutating call commits with the change it records, in the same
// transaction, or not at all: a change whose COMMIT fails leaves neither, a handler that fails
// after its change committed leaves the change and its row (and says how the call ended beside
// it), a transaction that changed nothing carries no row. On MariaDB and on SQLite.

interface AuditOf {
  outcome: string;
  answerOutcome: string;
  seq: bigint;
}

/** The audit of the calls about `merchantId` (each test its own), oldest first. */
async function auditOf(service: WidgetService, merchantId: string): Promise<AuditOf[]> {
  const { records } = await createServiceClient(AuditService, service.url, { operator: testOperator("viewer"), service: "merchant" }).listAuditRecords({ targetId: merchantId, limit: 50 });
  return records.reverse().map((r) => ({ outcome: r.outcome, answerOutcome: r.answerOutcome, seq: r.seq }));
}

async function widgetNames(service: WidgetService): Promise<string[]> {
  return ((await service.db(WIDGETS).select("name").orderBy("name")) as Array<{ name: string }>).map((r) => r.name);
}

async function call(service: WidgetService, merchantId: string, displayName: string) {
  return widgets(service.url)
    .setDisplayName({ merchantId, displayName })
    .then(
      () => undefined,
      (err: unknown) => err,
    );
}

for (const dialect of ["mysql", "sqlite"] as const) {
  let service = undefined as unknown as WidgetService;
  test.before(async () => {
    service = await startWidgetService(dialect);
  });
  test.after.always(async () => {
    await (service as WidgetService | undefined)?.stop();
  });

  test.serial(`${dialect}: a change and its audit row commit together, in transactionWithRetry and in knex's own transaction; the answer is kept beside the row`, async (t) => {
    t.is(await call(service, "m_ok", "ok:w-ok"), undefined);
    t.is(await call(service, "m_ok", "knex:w-knex"), undefined);
    t.deepEqual(await widgetNames(service), ["w-knex", "w-ok"]);
    const rows = await auditOf(service, "m_ok");
    t.deepEqual(
      rows.map((r) => [r.outcome, r.answerOutcome]),
      [
        ["ok", ""],
        ["ok", ""],
      ],
    );
    // Written with the change: the chained row has no answer of its own, the answers table has it.
    const stored = await service.db(AUDIT_TABLE).whereIn("seq", rows.map((r) => Number(r.seq))).select<Array<{ id: string; after_json: string | null; jti: string | null }>>("id", "after_json", "jti");
    t.true(stored.every((r) => r.after_json === null && /^asr_/.test(r.jti ?? "")));
    t.is(((await service.db(ANSWERS_TABLE).whereIn("audit_id", stored.map((r) => r.id))) as unknown[]).length, 2);
    t.like(await verifyChain(service.url), { problem: undefined });
  });

  // The connection cut under a COMMIT is MySQL's (SQLite's COMMIT does not fail so).
  const mysqlOnly = dialect === "mysql" ? test.serial : test.serial.skip;

  mysqlOnly(`${dialect}: a change whose COMMIT fails leaves no change and no 'ok' row: one row, of the failure`, async (t) => {
    for (const how of ["commitfail", "knexcommitfail"] as const) {
      const before = await widgetNames(service);
      const merchantId = `m_${how}`;
      const err = await call(service, merchantId, `${how}:w-${how}`);
      t.truthy(err, how);
      t.deepEqual(await widgetNames(service), before, `${how}: nothing changed`);
      const rows = await auditOf(service, merchantId);
      t.is(rows.length, 1, how);
      t.not(rows[0]?.outcome, "ok", how);
    }
    t.like(await verifyChain(service.url), { problem: undefined });
  });

  test.serial(`${dialect}: a change whose audit row cannot be written does not commit (the row is not written after it)`, async (t) => {
    const head = (await service.db(HEAD_TABLE).where({ id: 1 }).first()) as { id: number; seq: number; hash: string };
    // The head is the one table of the audit a row can be taken from: without it no row can be appended.
    await service.db(HEAD_TABLE).where({ id: 1 }).delete();
    try {
      const info = await rejectionOf(widgets(service.url).setDisplayName({ merchantId: "m_unwritten", displayName: "ok:w-unwritten" }));
      t.is(info.code, Code.Internal);
      t.false((await widgetNames(service)).includes("w-unwritten"), "the change rolled back with its row");
    } finally {
      await service.db(HEAD_TABLE).insert(head);
    }
    t.deepEqual(await auditOf(service, "m_unwritten"), []);
    t.like(await verifyChain(service.url), { problem: undefined });
  });

  test.serial(`${dialect}: a handler that fails after its change committed: the change and its 'ok' row stay, the failure is its answer`, async (t) => {
    const info = await rejectionOf(widgets(service.url).setDisplayName({ merchantId: "m_after", displayName: "after:w-after" }));
    t.like(info, { code: Code.FailedPrecondition, reason: "BROKEN_AFTER" });
    t.true((await widgetNames(service)).includes("w-after"));
    t.deepEqual(
      (await auditOf(service, "m_after")).map((r) => [r.outcome, r.answerOutcome]),
      [["ok", "BROKEN_AFTER"]],
    );
  });

  test.serial(`${dialect}: a handler that fails inside its transaction: nothing changed, one row of the failure`, async (t) => {
    const info = await rejectionOf(widgets(service.url).setDisplayName({ merchantId: "m_inside", displayName: "inside:w-inside" }));
    t.like(info, { reason: "BROKEN_INSIDE" });
    t.false((await widgetNames(service)).includes("w-inside"));
    t.deepEqual(
      (await auditOf(service, "m_inside")).map((r) => [r.outcome, r.answerOutcome]),
      [["BROKEN_INSIDE", ""]],
    );
  });

  mysqlOnly(`${dialect}: a transaction that changed nothing (a read, an UPDATE matching no row) carries no row`, async (t) => {
    t.truthy(await call(service, "m_read", "readthenfail:w-read"));
    t.false((await widgetNames(service)).includes("w-read"));
    t.deepEqual((await auditOf(service, "m_read")).map((r) => r.outcome).filter((o) => o === "ok"), [], "the read-only transaction took no row");
    t.is((await auditOf(service, "m_read")).length, 1);
    t.like(await rejectionOf(widgets(service.url).setDisplayName({ merchantId: "m_noop", displayName: "noop:" })), { reason: "BROKEN_AFTER" });
    t.deepEqual(
      (await auditOf(service, "m_noop")).map((r) => [r.outcome, r.answerOutcome]),
      [["BROKEN_AFTER", ""]],
    );
  });

  mysqlOnly(`${dialect}: a retried transaction writes the row again with the attempt that commits: exactly one row`, async (t) => {
    t.is(await call(service, "m_retry", "retry:w-retry"), undefined);
    t.true((await widgetNames(service)).includes("w-retry"));
    t.deepEqual(
      (await auditOf(service, "m_retry")).map((r) => r.outcome),
      ["ok"],
    );
    t.like(await verifyChain(service.url), { problem: undefined });
  });
}
