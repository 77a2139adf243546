import { fromBinary, toBinary, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import { type Clock, decodeCursor, forUpdate, type Migration, newestFirstPage, newId, serviceError, transactionWithRetry } from "@payments/kit";
import { isMerchantUser, type ActorIdentity } from "./operator-assertion.js";
import type { ApprovalStatusName } from "@payments/contracts/statuses";
import { auditJson } from "./operator-audit.js";

export const APPROVALS_TABLE = "operator_approvals";
/** A pending approval not decided within this is expired: the maker asks again. */
export const APPROVAL_TTL_MS = 24 * 3600 * 1000;

/** The status names an approval row stores (their one home: contracts' statuses). */
export type ApprovalState = ApprovalStatusName;

/**
 * Requests that need a second operator (four-eyes): stored by the service that would run them,
 * with the exact request, until another operator approves (the service runs it once, as the
 * maker's and the approver's joint action) or rejects it, or 24 h pass.
 */
export const approvalsMigration: Migration = {
  name: "00000000000011_operator_approvals",
  async up(db) {
    await db.schema.createTable(APPROVALS_TABLE, (t) => {
      t.string("id", 40).primary();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.string("service", 40).notNullable();
      t.string("rpc", 200).notNullable();
      t.binary("request").notNullable();
      t.text("request_json").notNullable();
      t.string("summary", 500).notNullable();
      t.string("reason", 1000).notNullable();
      t.text("targets").notNullable();
      t.string("maker", 320).notNullable();
      t.string("maker_role", 16).notNullable();
      t.string("maker_kind", 16).notNullable();
      // pending → approved (run, outcome set) | rejected; expiry is read from expires_at.
      t.string("status", 16).notNullable();
      t.string("decided_by", 320).nullable();
      t.bigInteger("decided_at").nullable();
      t.string("decision_note", 1000).nullable();
      t.string("outcome", 80).nullable();
      t.text("response_json").nullable();
      t.index(["created_at", "id"], "operator_approvals_time");
      t.index(["status", "created_at", "id"], "operator_approvals_status");
    });
  },
  async down(db) {
    await db.schema.dropTable(APPROVALS_TABLE);
  },
};

export interface ApprovalRow {
  id: string;
  created_at: number | string;
  expires_at: number | string;
  service: string;
  rpc: string;
  request: Buffer | Uint8Array;
  request_json: string;
  summary: string;
  reason: string;
  targets: string;
  maker: string;
  maker_role: string;
  maker_kind: string;
  status: string;
  decided_by: string | null;
  decided_at: number | string | null;
  decision_note: string | null;
  outcome: string | null;
  response_json: string | null;
  /** Set when a merchant's own user asked: only a second user of that merchant decides it. */
  merchant_id?: string | null;
}

/** What an approval is now: a pending one past its expiry is expired. */
export function approvalState(row: Pick<ApprovalRow, "status" | "expires_at">, now: number): ApprovalState {
  if (row.status === "pending" && Number(row.expires_at) <= now) return "expired";
  return row.status as ApprovalState;
}

export interface ApprovalRequest {
  service: string;
  rpc: string;
  method: DescMethod;
  message: unknown;
  summary: string;
  reason: string;
  targets: readonly string[];
  maker: ActorIdentity;
}

/**
 * The fields of a request that are words, not the request: the reason a maker typed, a note, the
 * `actor` name the services ignore (the verified subject is recorded). Two asks that differ only
 * in these are the same request.
 */
export const FREE_TEXT_FIELDS: readonly string[] = ["reason", "note", "actor"];

/**
 * What makes two asks the same request: the request's JSON (as stored, secrets left out) without
 * its free-text fields, keys in a fixed order. Per RPC this is everything that changes what the
 * run does: a transfer matched to deposit A and the same transfer matched to deposit B are two
 * requests (two targets), an adjustment of 500.00 and one of 700.00 are two, a withdrawal's
 * process id makes it a withdrawal of its own (two submits of one form are one, two forms two);
 * the same match, return, adjustment, merchant or account asked twice is one, whoever asks and
 * whatever reason they type.
 */
export function sameRequestKey(requestJson: string): string {
  let value: unknown;
  try {
    value = JSON.parse(requestJson);
  } catch {
    return requestJson;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return requestJson;
  const kept = Object.entries(value as Record<string, unknown>).filter(([key]) => !FREE_TEXT_FIELDS.includes(key));
  return JSON.stringify(Object.fromEntries(kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** What an ask ended as: its approval's id, whether this ask stored it, and who asked for it first. */
export interface ApprovalAsked {
  id: string;
  created: boolean;
  /** The maker of the waiting approval (this ask's own maker when `created`). */
  maker: string;
  /** When it was asked (ms). */
  createdAt: number;
}

/**
 * Stores the request as a pending approval, changing nothing else, and `audit`s it in the same
 * transaction (its audit row commits with it, or neither does); its id, `created`. The same
 * request asked again while one waits, by anyone (sameRequestKey: the reason they typed aside),
 * gets the waiting approval (`created: false`, nothing written, its maker named), not a second one
 * that another operator might approve as well, running the same thing twice. Scoped as deciding
 * is: operators' asks meet operators' approvals, a merchant's users' their own merchant's.
 */
export async function requestApproval(
  db: Knex,
  clock: Clock,
  request: ApprovalRequest,
  audit: (trx: Knex.Transaction, approvalId: string) => Promise<unknown> = () => Promise.resolve(),
): Promise<ApprovalAsked> {
  const schema = request.method.input;
  const message = request.message as MessageShape<DescMessage>;
  const requestJson = auditJson(schema, message);
  const key = sameRequestKey(requestJson);
  const merchantId = isMerchantUser(request.maker) ? request.maker.merchantId : null;
  return transactionWithRetry(db, async (trx) => {
    const id = newId("apr");
    const now = clock.now().getTime();
    // Locked (MySQL): two asks at once serialise here (the loser of the gap locks retries and finds the winner's).
    const query = trx(APPROVALS_TABLE)
      .where({ service: request.service, rpc: request.rpc, status: "pending" })
      .where((q) => {
        void (merchantId === null ? q.whereNull("merchant_id") : q.where({ merchant_id: merchantId }));
      })
      .where("expires_at", ">", now)
      .orderBy([{ column: "created_at" }, { column: "id" }])
      .select("id", "request_json", "maker", "created_at");
    const waiting = (await forUpdate(trx, query)) as Array<Pick<ApprovalRow, "id" | "request_json" | "maker" | "created_at">>;
    const same = waiting.find((row) => sameRequestKey(row.request_json) === key);
    if (same) return { id: same.id, created: false, maker: same.maker, createdAt: Number(same.created_at) };
    await storeApproval(trx, id, now, request, schema, message, requestJson);
    await audit(trx, id);
    return { id, created: true, maker: request.maker.subject, createdAt: now };
  });
}

async function storeApproval(trx: Knex.Transaction, id: string, now: number, request: ApprovalRequest, schema: DescMessage, message: MessageShape<DescMessage>, requestJson: string): Promise<void> {
  await trx(APPROVALS_TABLE).insert({
    id,
    created_at: now,
    expires_at: now + APPROVAL_TTL_MS,
    service: request.service,
    rpc: request.rpc,
    request: Buffer.from(toBinary(schema, message)),
    request_json: requestJson,
    summary: request.summary.slice(0, 500),
    reason: request.reason.slice(0, 1000),
    targets: JSON.stringify(request.targets),
    maker: request.maker.subject,
    maker_role: request.maker.role,
    maker_kind: request.maker.kind,
    status: "pending",
    ...(isMerchantUser(request.maker) ? { merchant_id: request.maker.merchantId } : {}),
  });
}

export async function findApproval(db: Knex, id: string): Promise<ApprovalRow | undefined> {
  return (await db(APPROVALS_TABLE).where({ id }).first()) as ApprovalRow | undefined;
}

/** The stored request, as its RPC's input message. */
export function storedRequest(row: ApprovalRow, method: DescMethod): MessageShape<DescMessage> {
  return fromBinary(method.input, new Uint8Array(row.request));
}

/**
 * Takes a pending, unexpired approval for running, once: a conditional UPDATE, so two approvers
 * (or one, twice) can never run it twice. false when it was not pending any more. `db` is the
 * transaction that records the decision in the audit too (operator-services.ts).
 */
export async function claimApproval(db: Knex, clock: Clock, id: string, approver: ActorIdentity, note: string): Promise<boolean> {
  const now = clock.now().getTime();
  const changed = await db(APPROVALS_TABLE)
    .where({ id, status: "pending" })
    .where((q) => {
      // Operators decide operators' approvals; a merchant's user only its own merchant's.
      void (isMerchantUser(approver) ? q.where({ merchant_id: approver.merchantId }) : q.whereNull("merchant_id"));
    })
    .where("expires_at", ">", now)
    .whereNot("maker", approver.subject)
    .update({ status: "approved", decided_by: approver.subject, decided_at: now, decision_note: note.slice(0, 1000), outcome: "running" });
  return changed === 1;
}

export async function recordApprovalOutcome(db: Knex, id: string, outcome: string, responseJson: string | null): Promise<void> {
  await db(APPROVALS_TABLE).where({ id, status: "approved" }).update({ outcome: outcome.slice(0, 80), response_json: responseJson });
}

export async function rejectApproval(db: Knex, clock: Clock, id: string, rejecter: ActorIdentity, reason: string): Promise<boolean> {
  const now = clock.now().getTime();
  const changed = await db(APPROVALS_TABLE)
    .where({ id, status: "pending" })
    .where("expires_at", ">", now)
    .update({ status: "rejected", decided_by: rejecter.subject, decided_at: now, decision_note: reason.slice(0, 1000) });
  return changed === 1;
}

/** Whether an approval's stored targets name `targetId` (one of them, exactly). */
export function namesTarget(row: Pick<ApprovalRow, "targets">, targetId: string): boolean {
  try {
    const value: unknown = JSON.parse(row.targets);
    return Array.isArray(value) && value.includes(targetId);
  } catch {
    return false;
  }
}

export async function listApprovals(
  db: Knex,
  clock: Clock,
  query: {
    state?: ApprovalState;
    limit: number;
    cursor?: string;
    /** A merchant's approvals, or null: the operators' own. */
    merchantId: string | null;
    /** Only those about this id (a transfer, a deposit, a merchant…): one of their targets, exactly. */
    targetId?: string;
  },
): Promise<{ rows: ApprovalRow[]; nextCursor: string }> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  if (query.cursor && !after) throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", "cursor is not one this service issued", { field: "cursor" });
  const now = clock.now().getTime();
  const q = db(APPROVALS_TABLE).select("*");
  if (query.merchantId === null) q.whereNull("merchant_id");
  else q.where({ merchant_id: query.merchantId });
  if (query.state === "pending") q.where({ status: "pending" }).where("expires_at", ">", now);
  else if (query.state === "expired") q.where({ status: "pending" }).where("expires_at", "<=", now);
  else if (query.state) q.where({ status: query.state });
  // The targets are a JSON array of strings: the id as JSON writes it, quotes and all, is one whole element.
  if (query.targetId) q.whereRaw("targets like ? escape '!'", [`%${JSON.stringify(query.targetId).replace(/[!%_]/g, "!$&")}%`]);
  const page = await newestFirstPage<ApprovalRow>(q, { limit: query.limit, ...(after ? { after } : {}) });
  const targetId = query.targetId;
  return targetId ? { ...page, rows: page.rows.filter((row) => namesTarget(row, targetId)) } : page;
}
