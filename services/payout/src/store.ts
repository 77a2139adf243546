import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import {
  BalanceSchema,
  LedgerEntrySchema,
  WithdrawalApprovalSchema,
  WithdrawalApprovalState,
  WithdrawalSchema,
  type Balance,
  type LedgerEntry,
  type Withdrawal,
  type WithdrawalStatus,
} from "@payments/contracts/payout";
import { withdrawalStatusFromProto, withdrawalStatusToProto } from "@payments/contracts/statuses";
import { forUpdate, serviceError } from "@payments/kit";
import type { Knex } from "knex";
import type { BalanceRow, LedgerEntryRow } from "./ledger.js";
import { isApprovalState, type ApprovalColumn, type ApprovalStateName } from "./withdrawal-approval.js";
import { isWithdrawalStatus, type WithdrawalStatusName } from "./withdrawal-state.js";

/** The payout tables' rows and their protobuf messages. BIGINT columns come back as numbers. */

export interface WithdrawalRow {
  id: string;
  merchant_id: string;
  process_id: string;
  status: string;
  amount: number;
  currency: string;
  bank_id: string;
  account_name: string;
  iban: string;
  user_id: string;
  user_name: string;
  name: string;
  failure_reason: string | null;
  sequence: number;
  dispatched_at: number | null;
  dispatch_attempts: number;
  bank_reference: string | null;
  awaiting_operator: boolean | number;
  /** The merchant's kind at creation: which connector the worker sends it to. */
  sandbox: boolean | number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  /** Who created it, in words (callerAttribution); null before issue 32. */
  created_by?: string | null;
  /** The merchant's API key, when the gateway asked for it. */
  api_key_id?: string | null;
  /** The merchant's four-eyes on it (src/withdrawal-approval.ts); null: none needed. */
  approval?: string | null;
  approval_expires_at?: number | null;
  approval_decided_by?: string | null;
  approval_decided_at?: number | null;
  approval_note?: string | null;
}

/** The approval column of a row; a stored value the rules do not know throws (a bug, never a guess). */
export function rowApproval(row: Pick<WithdrawalRow, "id" | "approval">): ApprovalColumn {
  const value = row.approval ?? null;
  if (value !== null && !isApprovalState(value)) throw new Error(`withdrawal ${row.id} has an unknown approval ${value}`);
  return value;
}

const APPROVAL_TO_PROTO: Readonly<Record<ApprovalStateName, WithdrawalApprovalState>> = {
  awaiting: WithdrawalApprovalState.AWAITING,
  approved: WithdrawalApprovalState.APPROVED,
  rejected: WithdrawalApprovalState.REJECTED,
  expired: WithdrawalApprovalState.EXPIRED,
  cancelled: WithdrawalApprovalState.CANCELLED,
  trusted_key: WithdrawalApprovalState.TRUSTED_KEY,
};

function approvalFromRow(row: WithdrawalRow) {
  const state = rowApproval(row);
  if (state === null) return undefined;
  const time = (ms: number | null | undefined) => (ms === null || ms === undefined ? undefined : timestampFromMs(Number(ms)));
  return create(WithdrawalApprovalSchema, {
    state: APPROVAL_TO_PROTO[state],
    expiresAt: time(row.approval_expires_at),
    decidedBy: row.approval_decided_by ?? "",
    decidedAt: time(row.approval_decided_at),
    note: row.approval_note ?? "",
  });
}

// The `status` column stores the public names of @payments/contracts/statuses.
export const statusToProto: (status: WithdrawalStatusName) => WithdrawalStatus = withdrawalStatusToProto;

/** The status name of a proto status; undefined for UNSPECIFIED or an unknown number. */
export const statusFromProto: (status: WithdrawalStatus) => WithdrawalStatusName | undefined = withdrawalStatusFromProto;

export function rowStatus(row: Pick<WithdrawalRow, "status" | "id">): WithdrawalStatusName {
  if (!isWithdrawalStatus(row.status)) throw new Error(`withdrawal ${row.id} has an unknown status ${row.status}`);
  return row.status;
}

/**
 * Waiting for an operator: processing, and the connector answered "accepted" (the manual
 * connector always does). The column keeps that answer after the decision; the message's
 * flag is about now.
 */
export function isAwaitingOperator(row: Pick<WithdrawalRow, "status" | "awaiting_operator">): boolean {
  return row.status === "processing" && Boolean(row.awaiting_operator);
}

export function withdrawalFromRow(row: WithdrawalRow): Withdrawal {
  return create(WithdrawalSchema, {
    id: row.id,
    merchantId: row.merchant_id,
    processId: row.process_id,
    amount: BigInt(row.amount),
    currency: row.currency,
    status: statusToProto(rowStatus(row)),
    bankId: row.bank_id,
    accountName: row.account_name,
    iban: row.iban,
    userId: row.user_id,
    userName: row.user_name,
    name: row.name,
    failureReason: row.failure_reason ?? "",
    sequence: BigInt(row.sequence),
    createdAt: timestampFromMs(Number(row.created_at)),
    updatedAt: timestampFromMs(Number(row.updated_at)),
    completedAt: row.completed_at === null ? undefined : timestampFromMs(Number(row.completed_at)),
    awaitingOperator: isAwaitingOperator(row),
    bankReference: row.bank_reference ?? "",
    sandbox: Boolean(row.sandbox),
    createdBy: row.created_by ?? "",
    apiKeyId: row.api_key_id ?? "",
    approval: approvalFromRow(row),
  });
}

export function balanceFromRow(row: Pick<BalanceRow, "currency" | "available" | "held">): Balance {
  return create(BalanceSchema, { currency: row.currency, available: BigInt(row.available), held: BigInt(row.held) });
}

export function ledgerEntryFromRow(row: LedgerEntryRow): LedgerEntry {
  return create(LedgerEntrySchema, {
    id: row.id,
    merchantId: row.merchant_id,
    currency: row.currency,
    kind: row.kind,
    availableDelta: BigInt(row.available_delta),
    heldDelta: BigInt(row.held_delta),
    transactionId: row.transaction_id,
    reason: row.reason ?? "",
    createdAt: timestampFromMs(Number(row.created_at)),
    actor: row.actor ?? "",
  });
}

export interface WithdrawalKey {
  withdrawalId?: string;
  processId?: string;
  /** When set, a withdrawal of another merchant is not found. */
  merchantId?: string;
}

function keyQuery(db: Knex, key: WithdrawalKey): Knex.QueryBuilder {
  const query = db("withdrawals");
  if (key.withdrawalId !== undefined) query.where({ id: key.withdrawalId });
  else if (key.processId !== undefined && key.merchantId !== undefined) query.where({ process_id: key.processId });
  else throw new Error("a withdrawal is found by its id, or by merchant and process id");
  if (key.merchantId !== undefined) query.where({ merchant_id: key.merchantId });
  return query;
}

/** The withdrawal, or TRANSACTION_NOT_FOUND. `lock` holds it until the transaction ends. */
export async function getWithdrawalRow(db: Knex, key: WithdrawalKey, options: { lock?: boolean } = {}): Promise<WithdrawalRow> {
  const query = keyQuery(db, key).first();
  const row = (await (options.lock ? forUpdate(db, query) : query)) as WithdrawalRow | undefined;
  if (!row) {
    throw serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", `no withdrawal ${key.withdrawalId ?? `with processId ${key.processId}`}`);
  }
  return row;
}

export async function findWithdrawalRow(db: Knex, key: WithdrawalKey): Promise<WithdrawalRow | undefined> {
  return (await keyQuery(db, key).first()) as WithdrawalRow | undefined;
}
