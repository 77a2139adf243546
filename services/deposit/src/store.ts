import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import {
  AssignedAccountSchema,
  CustomerSchema,
  DepositSchema,
  IncomingTransferSchema,
  TransferActionSchema,
  TransferCandidateSchema,
  TransferStatus,
  type Deposit,
  type DepositStatus,
  type IncomingTransfer,
} from "@payments/contracts/deposit";
import { depositStatusFromProto, depositStatusToProto, isTransferStatusName, transferStatusToProto } from "@payments/contracts/statuses";
import { forUpdate, serviceError } from "@payments/kit";
import type { Knex } from "knex";
import { isDepositStatus, type DepositStatusName } from "./deposit-state.js";
import type { TransferActionName, TransferStatusName } from "./transfer-state.js";

/**
 * The deposit tables: row shapes, reads, and the conversion to protobuf messages. Both
 * dialects return BIGINT and BOOLEAN columns as numbers; amounts become bigint only at the
 * proto boundary.
 */

export interface DepositRow {
  id: string;
  merchant_id: string;
  process_id: string;
  status: string;
  amount: number;
  requested_amount: number;
  currency: string;
  bank_id: string;
  account_id: string | null;
  account_bank_id: string | null;
  account_bank_name: string | null;
  account_name: string | null;
  account_iban: string | null;
  reference: string;
  checkout_token: string;
  customer_id: string;
  customer_name: string;
  customer_username: string;
  metadata_json: string | null;
  /** Where the checkout sends the customer back, normalised; null when none was given (migration 20261127000000). */
  return_url: string | null;
  failure_reason: string | null;
  transfer_id: string | null;
  /** Completed by a transfer that arrived after it expired (SQLite answers 0/1). */
  late_payment?: boolean | number;
  match_by?: string | null;
  match_score?: number | null;
  /** JSON array of strings. */
  match_reasons?: string | null;
  sequence: number;
  sandbox: boolean | number;
  expires_at: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  /** Who completed it, in words: the paying transfer's reporter, or the operator (migration 20261223000000). */
  completed_by?: string | null;
}

export interface TransferRow {
  id: string;
  iban: string;
  bank_transaction_id: string;
  amount: number;
  currency: string;
  sender_name: string;
  reference: string;
  deposit_id: string | null;
  unmatched_reason: string | null;
  reported_at: number;
  /** transfer-state.ts: matched, review, unmatched, returning, returned. */
  status: TransferStatusName;
  review_deposit_id: string | null;
  match_by: string | null;
  match_score: number | null;
  /** JSON array of strings. */
  match_reasons: string | null;
  /** JSON array of {depositId, score, reasons}. */
  candidates: string | null;
  late: boolean | number;
  value_date: string | null;
  sender_iban: string | null;
  source: string;
  resolved_by: string | null;
  resolved_at: number | null;
  resolution: string | null;
  /** Returns asked for so far; the next one is attempt return_attempts + 1 (migration 20261126000000). */
  return_attempts?: number;
  /** Who reported it, in words (migration 20261223000000). */
  reported_by?: string | null;
}

/** What was done to a transfer: who (an operator's name, "rules" or "payout"), when, why. */
export interface TransferActionRow {
  id: string;
  transfer_id: string;
  action: TransferActionName;
  actor: string;
  reason: string;
  deposit_id: string | null;
  at: number;
}

// The `status` column stores the public names of @payments/contracts/statuses.
export const statusToProto: (status: DepositStatusName) => DepositStatus = depositStatusToProto;

/** The status name of a proto status; undefined for UNSPECIFIED or an unknown number. */
export const statusFromProto: (status: DepositStatus) => DepositStatusName | undefined = depositStatusFromProto;

export function rowStatus(row: Pick<DepositRow, "status" | "id">): DepositStatusName {
  if (!isDepositStatus(row.status)) throw new Error(`deposit ${row.id} has an unknown status ${row.status}`);
  return row.status;
}

export function depositFromRow(row: DepositRow): Deposit {
  return create(DepositSchema, {
    id: row.id,
    merchantId: row.merchant_id,
    processId: row.process_id,
    amount: BigInt(row.amount),
    requestedAmount: BigInt(row.requested_amount),
    currency: row.currency,
    status: statusToProto(rowStatus(row)),
    bankId: row.bank_id,
    assignedAccount:
      row.account_id && row.account_iban
        ? create(AssignedAccountSchema, {
            accountId: row.account_id,
            bankId: row.account_bank_id ?? "",
            bankName: row.account_bank_name ?? "",
            accountName: row.account_name ?? "",
            iban: row.account_iban,
          })
        : undefined,
    reference: row.reference,
    checkoutToken: row.checkout_token,
    customer: create(CustomerSchema, { id: row.customer_id, name: row.customer_name, username: row.customer_username }),
    metadataJson: row.metadata_json ?? "",
    failureReason: row.failure_reason ?? "",
    sequence: BigInt(row.sequence),
    sandbox: Boolean(row.sandbox),
    expiresAt: timestampFromMs(Number(row.expires_at)),
    createdAt: timestampFromMs(Number(row.created_at)),
    updatedAt: timestampFromMs(Number(row.updated_at)),
    completedAt: row.completed_at === null ? undefined : timestampFromMs(Number(row.completed_at)),
    latePayment: Boolean(row.late_payment),
    matchBy: row.match_by ?? "",
    matchScore: row.match_score == null ? 0 : Number(row.match_score),
    matchReasons: parseJsonList<string>(row.match_reasons),
    returnUrl: row.return_url ?? "",
    completedBy: row.completed_by ?? "",
  });
}

/** A JSON array column (null or empty when there is none). */
export function parseJsonList<T>(value: string | null | undefined): T[] {
  if (!value) return [];
  const parsed = JSON.parse(value) as unknown;
  return Array.isArray(parsed) ? (parsed as T[]) : [];
}

export function transferFromRow(row: TransferRow, actions: readonly TransferActionRow[] = []): IncomingTransfer {
  return create(IncomingTransferSchema, {
    id: row.id,
    iban: row.iban,
    amount: BigInt(row.amount),
    currency: row.currency,
    senderName: row.sender_name,
    reference: row.reference,
    bankTransactionId: row.bank_transaction_id,
    depositId: row.deposit_id ?? "",
    unmatchedReason: row.unmatched_reason ?? "",
    reportedAt: timestampFromMs(Number(row.reported_at)),
    status: isTransferStatusName(row.status) ? transferStatusToProto(row.status) : TransferStatus.UNSPECIFIED,
    reviewDepositId: row.review_deposit_id ?? "",
    matchBy: row.match_by ?? "",
    matchScore: row.match_score == null ? 0 : Number(row.match_score),
    matchReasons: parseJsonList<string>(row.match_reasons),
    candidates: parseJsonList<{ depositId: string; score: number; reasons: string[] }>(row.candidates).map((c) => create(TransferCandidateSchema, c)),
    late: Boolean(row.late),
    valueDate: row.value_date ?? "",
    senderIban: row.sender_iban ?? "",
    source: row.source,
    resolvedBy: row.resolved_by ?? "",
    resolvedAt: row.resolved_at == null ? undefined : timestampFromMs(Number(row.resolved_at)),
    resolution: row.resolution ?? "",
    reportedBy: row.reported_by ?? "",
    actions: actions.map((a) =>
      create(TransferActionSchema, { action: a.action, actor: a.actor, reason: a.reason, depositId: a.deposit_id ?? "", at: timestampFromMs(Number(a.at)) }),
    ),
  });
}

export function notFound(what: string): never {
  throw serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", `no deposit ${what}`);
}

export interface DepositKey {
  depositId?: string;
  processId?: string;
  /** When set, a deposit of another merchant is not found. */
  merchantId?: string;
}

function keyQuery(db: Knex, key: DepositKey): Knex.QueryBuilder {
  const query = db("deposits");
  if (key.depositId !== undefined) query.where({ id: key.depositId });
  else if (key.processId !== undefined && key.merchantId !== undefined) query.where({ process_id: key.processId });
  else throw new Error("a deposit is found by its id, or by merchant and process id");
  if (key.merchantId !== undefined) query.where({ merchant_id: key.merchantId });
  return query;
}

/** The deposit, or TRANSACTION_NOT_FOUND. `lock` holds it until the transaction ends. */
export async function getDepositRow(db: Knex, key: DepositKey, options: { lock?: boolean } = {}): Promise<DepositRow> {
  const query = keyQuery(db, key).first();
  const row = (await (options.lock ? forUpdate(db, query) : query)) as DepositRow | undefined;
  if (!row) notFound(key.depositId !== undefined ? key.depositId : `with processId ${key.processId}`);
  return row;
}

export async function findDepositRow(db: Knex, key: DepositKey): Promise<DepositRow | undefined> {
  return (await keyQuery(db, key).first()) as DepositRow | undefined;
}

export async function findDepositByToken(db: Knex, token: string): Promise<DepositRow | undefined> {
  return (await db("deposits").where({ checkout_token: token }).first()) as DepositRow | undefined;
}

