import type { Knex } from "knex";
import { newId } from "@payments/kit";

/** Changes to accounts that wait for a second admin. */
export type ApprovalAction = "create_operator" | "set_role";
export type ApprovalStatus = "pending" | "approved" | "rejected" | "expired";

export interface Approval {
  id: string;
  action: ApprovalAction;
  payload: Record<string, unknown>;
  targetEmail: string;
  requestedBy: string;
  requestedAt: number;
  expiresAt: number;
  /** `expired` is read, not written: a pending request past its expiry. */
  status: ApprovalStatus;
  decidedBy: string | null;
  decidedAt: number | null;
}

interface ApprovalRow {
  id: string;
  action: string;
  payload: string;
  target_email: string;
  requested_by: string;
  requested_at: number;
  expires_at: number;
  status: string;
  decided_by: string | null;
  decided_at: number | null;
}

function fromRow(row: ApprovalRow, now: number): Approval {
  const stored = row.status === "approved" || row.status === "rejected" ? row.status : "pending";
  return {
    id: row.id,
    action: row.action === "set_role" ? "set_role" : "create_operator",
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    targetEmail: row.target_email,
    requestedBy: row.requested_by,
    requestedAt: Number(row.requested_at),
    expiresAt: Number(row.expires_at),
    status: stored === "pending" && Number(row.expires_at) <= now ? "expired" : stored,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at === null ? null : Number(row.decided_at),
  };
}

export function publicApproval(approval: Approval): Record<string, unknown> {
  return {
    id: approval.id,
    action: approval.action,
    targetEmail: approval.targetEmail,
    change: approval.payload,
    requestedBy: approval.requestedBy,
    requestedAt: new Date(approval.requestedAt).toISOString(),
    expiresAt: new Date(approval.expiresAt).toISOString(),
    status: approval.status,
    decidedBy: approval.decidedBy,
    decidedAt: approval.decidedAt === null ? null : new Date(approval.decidedAt).toISOString(),
  };
}

export async function requestApproval(
  db: Knex,
  input: { action: ApprovalAction; payload: Record<string, unknown>; targetEmail: string; requestedBy: string; now: number; ttlMs: number },
): Promise<Approval> {
  const row: ApprovalRow = {
    id: newId("apr"),
    action: input.action,
    payload: JSON.stringify(input.payload),
    target_email: input.targetEmail,
    requested_by: input.requestedBy,
    requested_at: input.now,
    expires_at: input.now + input.ttlMs,
    status: "pending",
    decided_by: null,
    decided_at: null,
  };
  await db("operator_approvals").insert(row);
  return fromRow(row, input.now);
}

export async function findApproval(db: Knex, id: string, now: number): Promise<Approval | undefined> {
  const row = (await db("operator_approvals").where({ id }).first()) as ApprovalRow | undefined;
  return row ? fromRow(row, now) : undefined;
}

/** Newest first; `pending` lists only those still waiting (not expired). */
export async function listApprovals(db: Knex, options: { status?: ApprovalStatus; now: number; limit: number }): Promise<Approval[]> {
  const query = db("operator_approvals").orderBy([{ column: "requested_at", order: "desc" }, { column: "id", order: "desc" }]).limit(options.limit);
  if (options.status === "pending") query.where({ status: "pending" }).andWhere("expires_at", ">", options.now);
  else if (options.status === "expired") query.where({ status: "pending" }).andWhere("expires_at", "<=", options.now);
  else if (options.status) query.where({ status: options.status });
  return ((await query) as ApprovalRow[]).map((row) => fromRow(row, options.now));
}

/**
 * Settles a pending, unexpired request, in `trx`: a conditional UPDATE, so of two admins
 * deciding at once exactly one wins. False when it was no longer pending.
 */
export async function decideApproval(trx: Knex, id: string, decision: "approved" | "rejected", decidedBy: string, now: number): Promise<boolean> {
  const changed = await trx("operator_approvals")
    .where({ id, status: "pending" })
    .andWhere("expires_at", ">", now)
    .update({ status: decision, decided_by: decidedBy, decided_at: now });
  return changed === 1;
}
