import type { Knex } from "knex";
import { newId } from "@payments/kit";
import { canonicalSubject } from "@payments/access";
import { countEnabledAdmins } from "./operators.js";

/**
 * Changes that wait for a second admin: each hands someone an account's access (a new account,
 * a raised role, an enabled account, a one-time link that sets its password), so one admin
 * alone could otherwise become two people.
 */
export const APPROVAL_ACTIONS = ["create_operator", "set_role", "enable_operator", "reset_operator", "invite_merchant_user", "reset_merchant_user"] as const;
export type ApprovalAction = (typeof APPROVAL_ACTIONS)[number];
export type ApprovalStatus = "pending" | "approved" | "rejected" | "expired";

export function isApprovalAction(value: string): value is ApprovalAction {
  return (APPROVAL_ACTIONS as readonly string[]).includes(value);
}

export interface Approval {
  id: string;
  /** An ApprovalAction; what a newer console wrote and this one does not know stays as written: listed, never applied. */
  action: string;
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
    action: row.action,
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

/**
 * Whether two names are one person: the maker check. Compared as the services compare assertion
 * subjects (trimmed, NFKC, case-folded), so `ALICE@…` never approves `alice@…`'s request.
 */
export function samePerson(a: string, b: string): boolean {
  return canonicalSubject(a) === canonicalSubject(b);
}

/**
 * Whether a change waits for a second admin. Always, but at bootstrap: while no enabled human
 * admin exists nobody could approve, and whoever passes the admin check then holds the console's
 * signing key (a service account's token minted with it), which could sign anything anyway.
 */
export async function needsSecondAdmin(db: Knex): Promise<boolean> {
  return (await countEnabledAdmins(db)) > 0;
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

/** Stores a pending request, in `db` (the transaction that also audits it); the maker is kept canonical. */
export async function requestApproval(
  db: Knex,
  input: { action: ApprovalAction; payload: Record<string, unknown>; targetEmail: string; requestedBy: string; now: number; ttlMs: number },
): Promise<Approval> {
  const row: ApprovalRow = {
    id: newId("apr"),
    action: input.action,
    payload: JSON.stringify(input.payload),
    target_email: input.targetEmail,
    requested_by: canonicalSubject(input.requestedBy),
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
    .update({ status: decision, decided_by: canonicalSubject(decidedBy), decided_at: now });
  return changed === 1;
}
