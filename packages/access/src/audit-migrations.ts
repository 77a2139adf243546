import type { Knex } from "knex";
import { isMysql, type Migration } from "@payments/kit";
import { auditRowHash, GENESIS_HASH, type ChainedFields } from "./audit-chain.js";

export const AUDIT_TABLE = "operator_audit";
export const TARGETS_TABLE = "operator_audit_targets";
/** What an audited call answered, when its row was written with its change, before the answer was known (keyed by the row's id). */
export const ANSWERS_TABLE = "operator_audit_answers";
/** The chain's head: one row (id 1), the seq and row_hash of the last row, locked by every append. */
export const HEAD_TABLE = "operator_audit_head";

/**
 * The tables nobody may change or remove a row of: the service's own database user only reads and
 * appends to them (the grants leave out UPDATE and DELETE, and triggers refuse both). The head
 * (HEAD_TABLE) is not one: every append moves it (an UPDATE of its one row). It needs no such
 * guard: a head set back by hand is caught against the heads published before (audit-head.ts).
 */
export const APPEND_ONLY_TABLES: readonly string[] = [AUDIT_TABLE, TARGETS_TABLE, ANSWERS_TABLE];
/** Every table of the audit: what a test's "nothing changed" leaves out (a refusal is recorded). */
export const AUDIT_TABLES: readonly string[] = [...APPEND_ONLY_TABLES, HEAD_TABLE];

function triggerName(table: string, op: "UPDATE" | "DELETE"): string {
  return `${table}_no_${op.toLowerCase()}`;
}

async function refuseChange(db: Knex, table: string, op: "UPDATE" | "DELETE"): Promise<void> {
  const name = triggerName(table, op);
  if (isMysql(db)) {
    await db.raw(`CREATE TRIGGER ${name} BEFORE ${op} ON ${table} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '${table} is append-only'`);
  } else {
    await db.raw(`CREATE TRIGGER ${name} BEFORE ${op} ON ${table} BEGIN SELECT RAISE(ABORT, '${table} is append-only'); END`);
  }
}

/** Triggers that refuse every UPDATE and DELETE of `table`'s rows, whoever asks. */
async function appendOnly(db: Knex, table: string): Promise<void> {
  for (const op of ["UPDATE", "DELETE"] as const) await refuseChange(db, table, op);
}

/**
 * The operators' audit: one row per operator call to a mutating RPC (refused or done) and per
 * approval step, in the database of the service that did it. Append-only: no code path updates
 * or deletes a row, and the database refuses it too (triggers), so a bug or a hand at the SQL
 * prompt leaves a trace by failing rather than by rewriting history.
 */
export const auditMigration: Migration = {
  name: "00000000000010_operator_audit",
  async up(db) {
    await db.schema.createTable(AUDIT_TABLE, (t) => {
      t.string("id", 40).primary();
      t.bigInteger("created_at").notNullable();
      t.string("actor", 320).notNullable();
      t.string("actor_kind", 16).notNullable();
      t.string("role", 16).notNullable();
      t.string("service", 40).notNullable();
      t.string("rpc", 200).notNullable();
      t.text("targets").notNullable();
      t.string("reason", 1000).notNullable();
      t.string("outcome", 80).notNullable();
      t.string("approval_id", 40).nullable();
      t.string("maker", 320).nullable();
      t.text("request_json").nullable();
      t.text("before_json").nullable();
      t.text("after_json").nullable();
      t.string("request_id", 128).nullable();
      t.string("trace_id", 32).nullable();
      t.index(["created_at", "id"], "operator_audit_time");
      t.index(["actor", "created_at", "id"], "operator_audit_actor");
    });
    await db.schema.createTable(TARGETS_TABLE, (t) => {
      t.string("target_id", 200).notNullable();
      t.bigInteger("created_at").notNullable();
      t.string("audit_id", 40).notNullable();
      t.primary(["target_id", "created_at", "audit_id"]);
    });
    for (const table of [AUDIT_TABLE, TARGETS_TABLE]) await appendOnly(db, table);
  },
  async down(db) {
    await db.schema.dropTable(TARGETS_TABLE);
    await db.schema.dropTable(AUDIT_TABLE);
  },
};

/**
 * Issue 24: a merchant's own users act through the same services. Their audit rows and their
 * approvals carry the merchant, so the merchant reads its own trail (on an index) and only a
 * second user of the same merchant decides its approvals.
 */
export const merchantScopeMigration: Migration = {
  name: "00000000000012_operator_merchant_scope",
  async up(db) {
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.string("merchant_id", 40).nullable();
      t.index(["merchant_id", "created_at", "id"], "operator_audit_merchant");
    });
    await db.schema.alterTable("operator_approvals", (t) => {
      t.string("merchant_id", 40).nullable();
      t.index(["merchant_id", "status", "created_at", "id"], "operator_approvals_merchant");
    });
  },
  async down(db) {
    await db.schema.alterTable("operator_approvals", (t) => {
      t.dropIndex(["merchant_id", "status", "created_at", "id"], "operator_approvals_merchant");
      t.dropColumn("merchant_id");
    });
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.dropIndex(["merchant_id", "created_at", "id"], "operator_audit_merchant");
      t.dropColumn("merchant_id");
    });
  },
};

/** Issue 32: every audit row names the workload the call came through (its SPIFFE ID). */
export const auditWorkloadMigration: Migration = {
  name: "00000000000013_audit_workload",
  async up(db) {
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.string("workload", 300).nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.dropColumn("workload");
    });
  },
};

/** Rows chained per UPDATE statement when the migration chains the rows already there. */
const CHAIN_BATCH = 200;

/**
 * Issue 32: the audit becomes a hash chain (audit-chain.ts). Every row gets `seq` (unique,
 * contiguous), `prev_hash` and `row_hash`, and a person's mutating call its assertion's `jti`
 * (unique: an assertion is accepted for one change). The rows already there are chained in
 * (created_at, id) order; the trigger that refuses UPDATE is dropped for that and put back
 * whatever happens, here only. Then the head (one row) and the answers table, append-only.
 */
export const auditChainMigration: Migration = {
  name: "00000000000014_audit_chain",
  async up(db) {
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.bigInteger("seq").nullable();
      t.string("prev_hash", 64).nullable();
      t.string("row_hash", 64).nullable();
      t.string("jti", 100).nullable();
    });
    await db.raw(`DROP TRIGGER IF EXISTS ${triggerName(AUDIT_TABLE, "UPDATE")}`);
    let head: { seq: number; hash: string };
    try {
      head = await chainExistingRows(db);
    } finally {
      await refuseChange(db, AUDIT_TABLE, "UPDATE");
    }
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.unique(["seq"], { indexName: "operator_audit_seq" });
      t.unique(["jti"], { indexName: "operator_audit_jti" });
    });
    await db.schema.createTable(HEAD_TABLE, (t) => {
      t.integer("id").primary();
      t.bigInteger("seq").notNullable();
      t.string("hash", 64).notNullable();
    });
    await db(HEAD_TABLE).insert({ id: 1, seq: head.seq, hash: head.hash });
    await db.schema.createTable(ANSWERS_TABLE, (t) => {
      t.string("audit_id", 40).primary();
      t.bigInteger("created_at").notNullable();
      t.string("outcome", 80).notNullable();
      t.text("after_json").nullable();
    });
    await appendOnly(db, ANSWERS_TABLE);
  },
  async down(db) {
    await db.schema.dropTable(ANSWERS_TABLE);
    await db.schema.dropTable(HEAD_TABLE);
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.dropUnique(["jti"], "operator_audit_jti");
      t.dropUnique(["seq"], "operator_audit_seq");
    });
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.dropColumns("seq", "prev_hash", "row_hash", "jti");
    });
  },
};

/** Gives every row seq, prev_hash and row_hash in (created_at, id) order, a batch per statement; the head it ends at. */
async function chainExistingRows(db: Knex): Promise<{ seq: number; hash: string }> {
  let seq = 0;
  let hash = GENESIS_HASH;
  let after: { createdAt: number; id: string } | undefined;
  for (;;) {
    const q = db(AUDIT_TABLE).select("*");
    if (after) {
      const { createdAt, id } = after;
      q.where((w) => void w.where("created_at", ">", createdAt).orWhere((w2) => void w2.where("created_at", createdAt).where("id", ">", id)));
    }
    const rows = (await q.orderBy([{ column: "created_at" }, { column: "id" }]).limit(CHAIN_BATCH)) as Array<Omit<ChainedFields, "seq" | "prev_hash">>;
    if (rows.length === 0) return { seq, hash };
    const chained = rows.map((row) => {
      const linked = { ...row, seq: ++seq, prev_hash: hash };
      hash = auditRowHash(linked);
      return { id: row.id, seq: linked.seq, prev: linked.prev_hash, hash };
    });
    const cases = (pick: (c: (typeof chained)[number]) => unknown) => ({ sql: `CASE id ${chained.map(() => "WHEN ? THEN ?").join(" ")} END`, bindings: chained.flatMap((c) => [c.id, pick(c)]) });
    const seqs = cases((c) => c.seq);
    const prevs = cases((c) => c.prev);
    const hashes = cases((c) => c.hash);
    await db.raw(`UPDATE ${AUDIT_TABLE} SET seq = ${seqs.sql}, prev_hash = ${prevs.sql}, row_hash = ${hashes.sql} WHERE id IN (${chained.map(() => "?").join(", ")})`, [
      ...seqs.bindings,
      ...prevs.bindings,
      ...hashes.bindings,
      ...chained.map((c) => c.id),
    ] as Knex.RawBinding[]);
    const last = rows.at(-1)!;
    after = { createdAt: Number(last.created_at), id: last.id };
  }
}
