import { Writable } from "node:stream";
import test from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import { auditHeadTopic } from "@payments/contracts";
import { AuditHeadSchema } from "@payments/contracts/operator";
import { createLogger, ensureDatabase, JetStreamBus, migrate, openDatabase, type Db } from "@payments/kit";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock } from "@payments/testing";
import {
  accessMigrations,
  auditChainMigration,
  AUDIT_TABLE,
  ChainWalk,
  HEAD_TABLE,
  recordAudit,
  TARGETS_TABLE,
  type ChainedRow,
} from "../src/index.js";
import { startWidgetService, widgets } from "./audit-fixture.js";

// The chain's migration gives the rows already there their place (in time order, the append-only
// triggers back in place after), and every service publishes its head on the bus and in a log
// line, at start and every AUDIT_HEAD_INTERVAL, reading one row when nothing happens.

async function withDatabase(dialect: "mysql" | "sqlite", fn: (db: Db) => Promise<void>): Promise<void> {
  if (dialect === "sqlite") {
    const db = openDatabase({ sqliteFile: ":memory:" });
    try {
      await fn(db);
    } finally {
      await db.destroy();
    }
    return;
  }
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  try {
    await fn(db);
  } finally {
    await db.destroy();
    await database.drop();
  }
}

async function walkAll(db: Db): Promise<ReturnType<ChainWalk["finish"]>> {
  const walk = new ChainWalk();
  for (const row of (await db(AUDIT_TABLE).orderBy("seq")) as ChainedRow[]) walk.add(row);
  const head = (await db(HEAD_TABLE).where({ id: 1 }).first()) as { seq: number; hash: string };
  return walk.finish({ seq: BigInt(head.seq), hash: head.hash });
}

for (const dialect of ["mysql", "sqlite"] as const) {
  test.serial(`${dialect}: the chain's migration chains the rows already there in (created_at, id) order, over several batches, and puts the append-only triggers back`, async (t) => {
    await withDatabase(dialect, async (db) => {
      const before = accessMigrations.filter((m) => m !== auditChainMigration);
      await migrate(db, before);
      // 450 rows written before the chain existed, in no particular order, two sharing each time.
      const rows = Array.from({ length: 450 }, (_, i) => ({
        id: `aud_${String((i * 7919) % 450).padStart(4, "0")}`,
        created_at: 1_790_000_000_000 + Math.floor(((i * 104729) % 450) / 2),
        actor: "ayse@example.com",
        actor_kind: "human",
        role: "finance",
        service: "payout",
        rpc: "payments.payout.v1.PayoutService/AdjustBalance",
        targets: "[]",
        reason: `old ${i}`,
        outcome: "ok",
      }));
      for (let i = 0; i < rows.length; i += 100) await db(AUDIT_TABLE).insert(rows.slice(i, i + 100));
      await migrate(db, accessMigrations);
      const chained = await db(AUDIT_TABLE).orderBy("seq").select<Array<{ id: string; created_at: number; seq: number }>>("id", "created_at", "seq");
      const byTime = [...rows].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1)).map((r) => r.id);
      t.deepEqual(
        chained.map((r) => r.id),
        byTime,
      );
      t.deepEqual(
        chained.map((r) => Number(r.seq)),
        rows.map((_, i) => i + 1),
      );
      t.like(await walkAll(db), { rows: 450, problem: undefined });
      await t.throwsAsync(db(AUDIT_TABLE).where({ seq: 1 }).update({ reason: "rewritten" }), { any: true, message: /append-only/ });
      await t.throwsAsync(db(AUDIT_TABLE).where({ seq: 1 }).delete(), { any: true, message: /append-only/ });
      // The next row continues the chain from the last old one.
      const clock = manualClock(new Date("2026-12-01T10:00:00Z"));
      await recordAudit(db, clock, createLogger({ service: "test", level: "silent" }), { service: "payout", rpc: "x/Y", actor: "new@example.com", targets: ["mer_1"], reason: "", outcome: "ok" });
      t.like(await walkAll(db), { rows: 451, problem: undefined });
      t.is(((await db(TARGETS_TABLE).where({ target_id: "mer_1" })) as unknown[]).length, 1);
    });
  });
}

test.serial("each service publishes its audit head at start and every AUDIT_HEAD_INTERVAL, on the bus and in a log line; idle, a pass reads one row", async (t) => {
  const nats = jetStreamTestEnv();
  const lines: Array<{ msg?: string; auditHead?: { service: string; seq: number; hash: string; at: string } }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  const service = await startWidgetService("mysql", { ...nats, AUDIT_HEAD_INTERVAL: "150ms" }, createLogger({ service: "merchant", level: "info", destination: sink }));
  const bus = await JetStreamBus.connect({ url: nats.NATS_URL, stream: nats.NATS_STREAM, subjectPrefix: nats.NATS_SUBJECT_PREFIX });
  t.teardown(async () => {
    await bus.close();
    await service.stop();
    await deleteTestStream(nats);
  });
  const lastPublished = async () => {
    const message = await (await bus.manager()).streams.getMessage(nats.NATS_STREAM, { last_by_subj: `${nats.NATS_SUBJECT_PREFIX}.${auditHeadTopic("merchant")}` });
    return message ? fromBinary(AuditHeadSchema, message.data) : undefined;
  };
  await widgets(service.url).setDisplayName({ merchantId: "m_head", displayName: "ok:head-1" });
  await widgets(service.url).setDisplayName({ merchantId: "m_head", displayName: "ok:head-2" });
  const head = (await service.db(HEAD_TABLE).where({ id: 1 }).first()) as { seq: number; hash: string };
  t.is(head.seq, 2);
  let published = await lastPublished();
  for (let i = 0; i < 50 && Number(published?.seq ?? 0) < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    published = await lastPublished();
  }
  t.like(published, { service: "merchant", seq: 2n, hash: head.hash });
  t.truthy(published?.at);
  t.true(lines.some((l) => l.auditHead?.service === "merchant" && l.auditHead.seq === 2 && l.auditHead.hash === head.hash && l.msg === `audit head of merchant: 2:${head.hash}`));
  // Idle: each pass is one read of the head's one row, nothing else.
  const statements: string[] = [];
  const listen = (query: { sql: string }) => statements.push(query.sql);
  service.db.on("query", listen);
  await new Promise((resolve) => setTimeout(resolve, 700));
  service.db.off("query", listen);
  // (The outbox relay polls the same database; the audit's statements are the head's reads alone.)
  const audit = statements.filter((sql) => /operator_audit/.test(sql));
  t.true(audit.length >= 2, `${audit.length} passes`);
  t.true(audit.every((sql) => /^select `seq`, `hash` from `operator_audit_head` where `id` = \? limit \?$/i.test(sql)), audit.join("\n"));
});
