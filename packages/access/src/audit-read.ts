import { create } from "@bufbuild/protobuf";
import { ListAuditChainResponseSchema, type ListAuditChainResponse } from "@payments/contracts/operator";
import type { Knex } from "knex";
import { decodeCursor, encodeCursor, repeatableRead, runTransaction } from "@payments/kit";
import { GENESIS_HASH, type ChainedRow } from "./audit-chain.js";
import { ANSWERS_TABLE, AUDIT_TABLE, HEAD_TABLE, TARGETS_TABLE } from "./audit-migrations.js";

// Reading the audit: its records for people (newest first, by actor, target or merchant) and its
// chain for verifiers (oldest first, by seq, with the head).

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
  seq?: number | string | null;
  jti?: string | null;
  /** From the answers table: what the call answered, when its row was written with its change. */
  answer_after_json?: string | null;
  /** From the answers table: how the call ended for its caller. */
  answer_outcome?: string | null;
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

/**
 * Newest first, paged by (created_at, id) on an index: by target through the targets table's key,
 * by actor on its index. Each row with its answer when one was recorded apart (a row written with
 * its change): `after_json` is the row's own, else the answer's (auditRecordOf).
 */
export async function listAudit(db: Knex, query: AuditQuery): Promise<{ rows: AuditRow[]; nextCursor: string } | "bad-cursor"> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  if (query.cursor && !after) return "bad-cursor";
  const q = db(AUDIT_TABLE)
    .select(`${AUDIT_TABLE}.*`, `${ANSWERS_TABLE}.after_json as answer_after_json`, `${ANSWERS_TABLE}.outcome as answer_outcome`)
    .leftJoin(ANSWERS_TABLE, `${ANSWERS_TABLE}.audit_id`, `${AUDIT_TABLE}.id`);
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

/** The chain's head as the database holds it; an empty chain's when the head row is missing. */
export async function readAuditHead(db: Knex): Promise<{ seq: number; hash: string }> {
  const head = await db(HEAD_TABLE).where({ id: 1 }).first<{ seq: number | string; hash: string } | undefined>("seq", "hash");
  return head ? { seq: Number(head.seq), hash: head.hash } : { seq: 0, hash: GENESIS_HASH };
}

/** Rows of the chain a page holds at most. */
export const MAX_CHAIN_PAGE = 1000;

const text = (value: string | null | undefined): string | undefined => (value === null || value === undefined ? undefined : value);

/**
 * One page of the chain, oldest first: the rows after `afterSeq` with every hashed field as
 * stored, and the head read in the same snapshot (REPEATABLE READ on MySQL; SQLite's transaction
 * is one), so a verifier's last page and head agree even while calls append.
 */
export async function auditChainPage(db: Knex, afterSeq: number, limit: number): Promise<ListAuditChainResponse> {
  return runTransaction(
    db,
    async (trx) => {
      const head = await readAuditHead(trx);
      const rows = (await trx(AUDIT_TABLE).where("seq", ">", afterSeq).orderBy("seq").limit(limit)) as ChainedRow[];
      const unchained = afterSeq === 0 ? Number(((await trx(AUDIT_TABLE).whereNull("seq").count({ n: "*" }).first()) as { n: number | string } | undefined)?.n ?? 0) : 0;
      return create(ListAuditChainResponseSchema, {
        rows: rows.map((r) => ({
          seq: BigInt(r.seq),
          id: r.id,
          createdAt: BigInt(r.created_at),
          actor: r.actor,
          actorKind: r.actor_kind,
          role: r.role,
          service: r.service,
          rpc: r.rpc,
          targets: r.targets,
          reason: r.reason,
          outcome: r.outcome,
          approvalId: text(r.approval_id),
          maker: text(r.maker),
          requestJson: text(r.request_json),
          beforeJson: text(r.before_json),
          afterJson: text(r.after_json),
          requestId: text(r.request_id),
          traceId: text(r.trace_id),
          merchantId: text(r.merchant_id),
          workload: text(r.workload),
          jti: text(r.jti),
          prevHash: r.prev_hash,
          rowHash: r.row_hash,
        })),
        head: { seq: BigInt(head.seq), hash: head.hash },
        unchainedRows: BigInt(unchained),
      });
    },
    repeatableRead(db),
  );
}

/** A row of a ListAuditChain page as the chain hashes it: an unset field is NULL. */
export function chainedRowOf(row: ListAuditChainResponse["rows"][number]): ChainedRow {
  const nullable = (value: string | undefined): string | null => value ?? null;
  return {
    seq: row.seq,
    id: row.id,
    created_at: row.createdAt,
    actor: row.actor,
    actor_kind: row.actorKind,
    role: row.role,
    service: row.service,
    rpc: row.rpc,
    targets: row.targets,
    reason: row.reason,
    outcome: row.outcome,
    approval_id: nullable(row.approvalId),
    maker: nullable(row.maker),
    request_json: nullable(row.requestJson),
    before_json: nullable(row.beforeJson),
    after_json: nullable(row.afterJson),
    request_id: nullable(row.requestId),
    trace_id: nullable(row.traceId),
    merchant_id: nullable(row.merchantId),
    workload: nullable(row.workload),
    jti: nullable(row.jti),
    prev_hash: row.prevHash,
    row_hash: row.rowHash,
  };
}
