import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { toJson } from "@bufbuild/protobuf";
import { trace } from "@opentelemetry/api";
import type { Knex } from "knex";
import { type Clock, currentRequestId, decodeCursor, encodeCursor, isMysql, type Logger, type Migration, newId } from "@payments/kit";

export const AUDIT_TABLE = "operator_audit";
export const TARGETS_TABLE = "operator_audit_targets";
/** The tables nobody may change or remove a row of: the service's own database user only reads and appends to them. */
export const APPEND_ONLY_TABLES: readonly string[] = [AUDIT_TABLE, TARGETS_TABLE];

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
    for (const table of [AUDIT_TABLE, TARGETS_TABLE]) {
      for (const op of ["UPDATE", "DELETE"]) {
        const name = `${table}_no_${op.toLowerCase()}`;
        if (isMysql(db)) {
          await db.raw(`CREATE TRIGGER ${name} BEFORE ${op} ON ${table} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '${table} is append-only'`);
        } else {
          await db.raw(`CREATE TRIGGER ${name} BEFORE ${op} ON ${table} BEGIN SELECT RAISE(ABORT, '${table} is append-only'); END`);
        }
      }
    }
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

const SECRET_FIELD = /secret|password|token|privateKey|totp/i;
const LONG_TEXT = 2000;

/** A message as JSON for the audit: secrets left out, long texts (a statement file) cut to their size. */
export function auditJson<D extends DescMessage>(schema: D, message: MessageShape<D>): string {
  return JSON.stringify(redact(toJson(schema, message, { alwaysEmitImplicit: false })));
}

function redact(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(redact);
  if (value instanceof Uint8Array) return `[${value.length} bytes]`;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) ? redactSecret(v) : redact(v)]));
  }
  if (typeof value === "string" && value.length > LONG_TEXT) return `[${value.length} characters]`;
  return value;
}

/**
 * A field named like a secret: its values go, but a message in it keeps its shape, its own
 * fields checked by name (a merchant's `secrets` keep their ids and expiries, a credential's
 * `secret` goes), so the JSON still decodes as its message (an approval's answer is read back).
 */
function redactSecret(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecret);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) return redact(value);
  return "[redacted]";
}

export interface AuditEntry {
  service: string;
  rpc: string;
  actor: string;
  /** Set when the actor is a merchant's own user (or API key): the merchant's trail is read by it. */
  merchantId?: string;
  /** The workload the call came through (SPIFFE ID). */
  workload?: string;
  actorKind?: string;
  role?: string;
  targets: ReadonlyArray<string | undefined>;
  reason: string;
  outcome: string;
  approvalId?: string;
  maker?: string;
  request?: { schema: DescMessage; message: unknown } | undefined;
  before?: unknown;
  after?: { schema: DescMessage; message: unknown } | undefined;
}

function traceId(): string | undefined {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && ctx.traceId !== "00000000000000000000000000000000" ? ctx.traceId : undefined;
}

function jsonOf(part: { schema: DescMessage; message: unknown } | undefined): string | null {
  if (!part) return null;
  try {
    return auditJson(part.schema, part.message as MessageShape<DescMessage>);
  } catch {
    return null;
  }
}

/**
 * Appends one audit row. A failure to write it is logged at error level and does not undo or
 * fail the call: the change it records has committed already, and an operator told "failed"
 * would try it again.
 */
export async function recordAudit(db: Knex, clock: Clock, logger: Logger, entry: AuditEntry): Promise<void> {
  const id = newId("aud");
  const createdAt = clock.now().getTime();
  const targets = [...new Set(entry.targets.filter((t): t is string => typeof t === "string" && t !== ""))].map((t) => t.slice(0, 200));
  try {
    await db.transaction(async (trx) => {
      await trx(AUDIT_TABLE).insert({
        id,
        created_at: createdAt,
        actor: entry.actor.slice(0, 320),
        actor_kind: entry.actorKind ?? "",
        role: entry.role ?? "",
        service: entry.service,
        rpc: entry.rpc,
        targets: JSON.stringify(targets),
        reason: entry.reason.slice(0, 1000),
        outcome: entry.outcome.slice(0, 80),
        approval_id: entry.approvalId ?? null,
        maker: entry.maker ?? null,
        request_json: jsonOf(entry.request),
        before_json: entry.before === undefined ? null : safeJson(entry.before),
        after_json: jsonOf(entry.after),
        request_id: currentRequestId() ?? null,
        trace_id: traceId() ?? null,
        ...(entry.merchantId ? { merchant_id: entry.merchantId } : {}),
        ...(entry.workload ? { workload: entry.workload.slice(0, 300) } : {}),
      });
      if (targets.length > 0) await trx(TARGETS_TABLE).insert(targets.map((target_id) => ({ target_id, created_at: createdAt, audit_id: id })));
    });
  } catch (err) {
    logger.error({ err, audit: { rpc: entry.rpc, actor: entry.actor, outcome: entry.outcome } }, "could not record an operator action in the audit");
  }
}

function safeJson(value: unknown): string | null {
  try {
    return JSON.stringify(redact(value));
  } catch {
    return null;
  }
}

export interface AuditRow {
  id: string;
  created_at: number | string;
  actor: string;
  actor_kind: string;
  role: string;
  service: string;
  rpc: string;
  targets: string;
  reason: string;
  outcome: string;
  approval_id: string | null;
  maker: string | null;
  request_json: string | null;
  before_json: string | null;
  after_json: string | null;
  request_id: string | null;
  trace_id: string | null;
  merchant_id?: string | null;
  workload?: string | null;
}

export interface AuditQuery {
  actor?: string;
  /** Only the actions of this merchant's own users (a merchant user's view of its trail). */
  merchantId?: string;
  targetId?: string;
  since?: number;
  until?: number;
  limit: number;
  cursor?: string;
}

/** Newest first, paged by (created_at, id) on an index: by target through the targets table's key, by actor on its index. */
export async function listAudit(db: Knex, query: AuditQuery): Promise<{ rows: AuditRow[]; nextCursor: string } | "bad-cursor"> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  if (query.cursor && !after) return "bad-cursor";
  const q = db(AUDIT_TABLE).select(`${AUDIT_TABLE}.*`);
  if (query.targetId) {
    // The page walks the targets table's (target_id, created_at, audit_id) key, joined to the rows.
    q.join(TARGETS_TABLE, `${TARGETS_TABLE}.audit_id`, `${AUDIT_TABLE}.id`).where(`${TARGETS_TABLE}.target_id`, query.targetId);
  }
  if (query.actor) q.where(`${AUDIT_TABLE}.actor`, query.actor);
  if (query.merchantId) q.where(`${AUDIT_TABLE}.merchant_id`, query.merchantId);
  if (query.since !== undefined) q.where(`${AUDIT_TABLE}.created_at`, ">=", query.since);
  if (query.until !== undefined) q.where(`${AUDIT_TABLE}.created_at`, "<", query.until);
  // Qualified: with the targets joined, created_at is in both tables.
  const at = query.targetId ? `${TARGETS_TABLE}.created_at` : `${AUDIT_TABLE}.created_at`;
  const id = query.targetId ? `${TARGETS_TABLE}.audit_id` : `${AUDIT_TABLE}.id`;
  if (after) {
    q.where((w) => {
      w.where(at, "<", after.createdAt).orWhere((w2) => {
        w2.where(at, after.createdAt).where(id, "<", after.id);
      });
    });
  }
  const rows = (await q.orderBy([{ column: at, order: "desc" }, { column: id, order: "desc" }]).limit(query.limit + 1)) as AuditRow[];
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return { rows: page, nextCursor: rows.length > query.limit && last ? encodeCursor({ createdAt: Number(last.created_at), id: last.id }) : "" };
}
