import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { toJson } from "@bufbuild/protobuf";
import { trace } from "@opentelemetry/api";
import type { Knex } from "knex";
import { type Clock, currentRequestId, hotQuery, isMysql, isUniqueViolation, type Logger, newId, transactionWithRetry, withoutCommitParticipant } from "@payments/kit";
import { auditRowHash, type ChainedFields } from "./audit-chain.js";
import { ANSWERS_TABLE, AUDIT_TABLE, HEAD_TABLE, TARGETS_TABLE } from "./audit-migrations.js";

// Writing the audit: one row per audited call (a person's call to a mutating RPC, refused or
// done; a read audited always) and per approval step, appended to the service's hash chain
// (audit-chain.ts) under the lock of its head, in the transaction of the change it records
// whenever there is one (the interceptor's commit participant, audit-participant.ts).

const SECRET_FIELD = /secret|password|token|privateKey|totp/i;
const LONG_TEXT = 2000;
/** A JSON text the audit keeps at most (MySQL's TEXT holds 65,535 bytes): a longer one is replaced by its size, never cut into something else. */
const MAX_JSON_BYTES = 60_000;

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
  /** The id of the person's assertion a mutating call came with: recorded once (a unique index), so it is accepted once. */
  jti?: string;
}

function traceId(): string | undefined {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && ctx.traceId !== "00000000000000000000000000000000" ? ctx.traceId : undefined;
}

/** Lone UTF-16 surrogates, which no database column stores as they are. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `value` as its column stores it, so what is hashed is what the database gives back: lone
 * surrogates replaced (U+FFFD), cut to `max` UTF-16 units without splitting a pair.
 */
export function storedText(value: string, max: number): string {
  const text = value.replace(LONE_SURROGATE, "\uFFFD");
  if (text.length <= max) return text;
  const cut = /[\uD800-\uDBFF]/.test(text[max - 1] ?? "") ? max - 1 : max;
  return text.slice(0, cut);
}

function storedJson(text: string | null): string | null {
  if (text === null) return null;
  const json = storedText(text, Number.MAX_SAFE_INTEGER);
  const bytes = Buffer.byteLength(json, "utf8");
  return bytes > MAX_JSON_BYTES ? JSON.stringify({ omitted: `${bytes} bytes` }) : json;
}

function jsonOf(part: { schema: DescMessage; message: unknown } | undefined): string | null {
  if (!part) return null;
  try {
    return auditJson(part.schema, part.message as MessageShape<DescMessage>);
  } catch {
    return null;
  }
}

function safeJson(value: unknown): string | null {
  try {
    return JSON.stringify(redact(value));
  } catch {
    return null;
  }
}

/** The answer of a call as the audit keeps it (JSON, secrets left out), or null. */
export function answerJson(after: AuditEntry["after"]): string | null {
  return storedJson(jsonOf(after));
}

type StoredRow = Omit<ChainedFields, "seq" | "prev_hash">;

/** The row an entry becomes, every text as its column stores it. Columns a database may lack (the console's `workload`) are left out when empty. */
function storedRow(clock: Clock, entry: AuditEntry): { row: StoredRow; targets: string[] } {
  const targets = [...new Set(entry.targets.filter((t): t is string => typeof t === "string" && t !== ""))].map((t) => storedText(t, 200));
  const row: StoredRow = {
    id: newId("aud"),
    created_at: clock.now().getTime(),
    actor: storedText(entry.actor, 320),
    actor_kind: storedText(entry.actorKind ?? "", 16),
    role: storedText(entry.role ?? "", 16),
    service: storedText(entry.service, 40),
    rpc: storedText(entry.rpc, 200),
    targets: JSON.stringify(targets),
    reason: storedText(entry.reason, 1000),
    outcome: storedText(entry.outcome, 80),
    approval_id: entry.approvalId ? storedText(entry.approvalId, 40) : null,
    maker: entry.maker ? storedText(entry.maker, 320) : null,
    request_json: storedJson(jsonOf(entry.request)),
    before_json: entry.before === undefined ? null : storedJson(safeJson(entry.before)),
    after_json: answerJson(entry.after),
    request_id: storedText(currentRequestId() ?? "", 128) || null,
    trace_id: traceId() ?? null,
    ...(entry.merchantId ? { merchant_id: storedText(entry.merchantId, 40) } : {}),
    ...(entry.workload ? { workload: storedText(entry.workload, 300) } : {}),
    ...(entry.jti ? { jti: storedText(entry.jti, 100) } : {}),
  };
  return { row, targets };
}

/**
 * The chain's head, locked until `trx` ends (FOR UPDATE on MySQL; SQLite has one writer): the
 * appends of concurrent transactions line up here, each in the order it commits.
 */
async function lockHead(trx: Knex.Transaction): Promise<{ seq: number; hash: string }> {
  const { rows } = await hotQuery(trx, `SELECT seq, hash FROM ${HEAD_TABLE} WHERE id = 1${isMysql(trx) ? " FOR UPDATE" : ""}`, []);
  const head = rows[0];
  if (!head) throw new Error(`the audit has no head row (${HEAD_TABLE}): the migration 00000000000014_audit_chain has not run`);
  return { seq: Number(head.seq), hash: String(head.hash) };
}

/**
 * Appends one row to the chain in `trx`, the transaction of the change it records: it commits
 * with the change or not at all. Throws what the database says (the change then rolls back):
 * a duplicate `jti` is a replayed assertion (isReplayedAssertion). The row's id.
 */
export async function appendAudit(trx: Knex.Transaction, clock: Clock, entry: AuditEntry): Promise<string> {
  const { row, targets } = storedRow(clock, entry);
  const head = await lockHead(trx);
  const linked = { ...row, seq: head.seq + 1, prev_hash: head.hash };
  const rowHash = auditRowHash(linked);
  await trx(AUDIT_TABLE).insert({ ...linked, row_hash: rowHash });
  if (targets.length > 0) await trx(TARGETS_TABLE).insert(targets.map((target_id) => ({ target_id, created_at: row.created_at, audit_id: row.id })));
  await hotQuery(trx, `UPDATE ${HEAD_TABLE} SET seq = ?, hash = ? WHERE id = 1`, [linked.seq, rowHash]);
  return row.id;
}

/** Whether `err` is the audit's unique index on `jti` refusing a second row: the assertion was used already. */
export function isReplayedAssertion(err: unknown): boolean {
  return isUniqueViolation(err) && /jti/.test((err as Error).message);
}

/** Whether a mutating call was accepted already with the assertion `jti` (its row is in the audit). */
export async function assertionUsed(db: Knex, jti: string): Promise<boolean> {
  const { rows } = await hotQuery(db, `SELECT 1 AS used FROM ${AUDIT_TABLE} WHERE jti = ? LIMIT 1`, [storedText(jti, 100)]);
  return rows.length > 0;
}

/** `entry` without its assertion's id: the row of a refusal whose assertion another call spent. */
export function withoutJti<T extends { jti?: string | undefined }>(entry: T): Omit<T, "jti"> {
  const copy = { ...entry };
  delete copy.jti;
  return copy;
}

function isTransaction(db: Knex): db is Knex.Transaction {
  return (db as { isTransaction?: unknown }).isTransaction === true;
}

/**
 * Appends one audit row. In a transaction (`trx`), the row is part of it: it commits with the
 * caller's change, and a failure to write it throws (the change must not commit unrecorded).
 * Given the database, in a transaction of its own: a failure is logged at error level and does
 * not fail the caller, whose outcome it only records.
 */
export async function recordAudit(db: Knex, clock: Clock, logger: Logger, entry: AuditEntry): Promise<void> {
  if (isTransaction(db)) {
    await appendAudit(db, clock, entry);
    return;
  }
  await recordAuditAlone(db, clock, logger, entry);
}

/**
 * recordAudit in a transaction of its own (what the interceptor writes for a call that committed
 * no change). Its row's id, or undefined when it could not be written (logged); `replayed` when
 * its `jti` was recorded already (a racing second use of the assertion): the row is then written
 * without it, as ASSERTION_REPLAYED.
 */
export async function recordAuditAlone(db: Knex, clock: Clock, logger: Logger, entry: AuditEntry): Promise<{ id?: string; replayed: boolean }> {
  // Its own transaction never carries another call's row (nor this one's, a second time).
  const append = (e: AuditEntry) => withoutCommitParticipant(() => transactionWithRetry(db, (trx) => appendAudit(trx, clock, e)));
  try {
    try {
      return { id: await append(entry), replayed: false };
    } catch (err) {
      if (!entry.jti || !isReplayedAssertion(err)) throw err;
      return { id: await append({ ...withoutJti(entry), outcome: "ASSERTION_REPLAYED" }), replayed: true };
    }
  } catch (err) {
    logger.error({ err, audit: { rpc: entry.rpc, actor: entry.actor, outcome: entry.outcome } }, "could not record an operator action in the audit");
    return { replayed: false };
  }
}

/**
 * What a call answered, for its row written with its change before the answer was known: the
 * answer (JSON, secrets left out) and how the call ended for its caller. Append-only beside the
 * chain (not hashed: the change is, and this is what the caller was told). A failure is logged.
 */
/** The ids of what a call answered (`{ merchant: { id } }`): a thing it created is found in the audit by its new id. */
export function madeIds(response: unknown): string[] {
  if (!response || typeof response !== "object") return [];
  return Object.values(response).flatMap((v) => (v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string" ? [(v as { id: string }).id] : []));
}

/** A row's targets with what its answer, recorded after it, says the call made (auditRecordOf). */
export function targetsWithAnswer(targets: readonly string[], answerJson: string | null | undefined): string[] {
  if (!answerJson) return [...targets];
  let answer: unknown;
  try {
    answer = JSON.parse(answerJson);
  } catch {
    return [...targets];
  }
  return [...new Set([...targets, ...madeIds(answer)])];
}

export async function recordAnswer(db: Knex, clock: Clock, logger: Logger, auditId: string, outcome: string, afterJson: string | null, madeTargets: readonly string[] = []): Promise<void> {
  try {
    await db(ANSWERS_TABLE).insert({ audit_id: auditId, created_at: clock.now().getTime(), outcome: storedText(outcome, 80), after_json: afterJson });
    // What the call made (a new merchant's id) is known only from its answer, after its row
    // committed with its change: it is indexed beside the row's own targets, at the row's time.
    if (madeTargets.length > 0) {
      const row = await db(AUDIT_TABLE).where({ id: auditId }).first<{ created_at: number | string } | undefined>("created_at");
      if (row) await db(TARGETS_TABLE).insert([...new Set(madeTargets)].map((target_id) => ({ target_id: storedText(target_id, 200), created_at: Number(row.created_at), audit_id: auditId })));
    }
  } catch (err) {
    logger.error({ err, audit: { id: auditId, outcome } }, "could not record a call's answer in the audit");
  }
}
