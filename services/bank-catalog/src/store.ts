import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import {
  BankSchema,
  FastSettingsSchema,
  MerchantLimitSchema,
  ReceivingAccountSchema,
  type Bank,
  type FastSettings,
  type MerchantLimit,
  type ReceivingAccount,
} from "@payments/contracts/bank-catalog";
import { isMysql, serviceError } from "@payments/kit";
import type { Knex } from "knex";
import { compareBankNames, type CatalogAccount, type CatalogBank, type FastConfig, type LimitOverride } from "./limits.js";

/**
 * The catalog's tables: row shapes, reads, and the conversion to protobuf messages.
 * Both dialects return BIGINT and BOOLEAN columns as numbers; amounts become bigint only
 * at the proto boundary.
 */

type DbBool = number | boolean;

export interface BankRow {
  id: string;
  name: string;
  code: string;
  logo_url: string;
  active: DbBool;
  min_amount: number;
  max_amount: number;
  created_at: number;
  updated_at: number;
}

export interface FastSettingsRow {
  id: number;
  enabled: DbBool;
  min_amount: number;
  max_amount: number;
  updated_at: number;
}

export interface MerchantLimitRow {
  merchant_id: string;
  bank_id: string;
  enabled: DbBool | null;
  min_amount: number | null;
  max_amount: number | null;
  created_at: number;
  updated_at: number;
}

export interface ReceivingAccountRow {
  id: string;
  bank_id: string;
  account_name: string;
  iban: string;
  active: DbBool;
  fast_enabled: DbBool;
  /** Sandbox accounts take only sandbox merchants' deposits; live ones only live merchants'. */
  sandbox: DbBool;
  created_at: number;
  updated_at: number;
}

type Db = Knex | Knex.Transaction;

/** Locks the selected rows until the transaction ends (MySQL); SQLite has a single writer already. */
function locked<T extends Knex.QueryBuilder>(db: Db, query: T): T {
  return isMysql(db as Knex) ? (query.forUpdate() as T) : query;
}

export function bankFromRow(row: BankRow): CatalogBank {
  return {
    id: row.id,
    name: row.name,
    code: row.code,
    logoUrl: row.logo_url,
    active: Boolean(row.active),
    minAmount: Number(row.min_amount),
    maxAmount: Number(row.max_amount),
  };
}

export function fastFromRow(row: FastSettingsRow): FastConfig {
  return { enabled: Boolean(row.enabled), minAmount: Number(row.min_amount), maxAmount: Number(row.max_amount) };
}

export function overrideFromRow(row: MerchantLimitRow): LimitOverride {
  return {
    bankId: row.bank_id,
    enabled: row.enabled === null ? null : Boolean(row.enabled),
    minAmount: row.min_amount === null ? null : Number(row.min_amount),
    maxAmount: row.max_amount === null ? null : Number(row.max_amount),
  };
}

export function accountFromRow(row: ReceivingAccountRow): CatalogAccount {
  return { id: row.id, bankId: row.bank_id, active: Boolean(row.active), fastEnabled: Boolean(row.fast_enabled) };
}

export function bankMessage(row: BankRow): Bank {
  const bank = bankFromRow(row);
  return create(BankSchema, {
    id: bank.id,
    name: bank.name,
    code: bank.code,
    logoUrl: bank.logoUrl,
    active: bank.active,
    minAmount: BigInt(bank.minAmount),
    maxAmount: BigInt(bank.maxAmount),
    createdAt: timestampFromDate(new Date(Number(row.created_at))),
    updatedAt: timestampFromDate(new Date(Number(row.updated_at))),
  });
}

export function fastSettingsMessage(row: FastSettingsRow): FastSettings {
  const fast = fastFromRow(row);
  return create(FastSettingsSchema, { enabled: fast.enabled, minAmount: BigInt(fast.minAmount), maxAmount: BigInt(fast.maxAmount) });
}

export function merchantLimitMessage(row: MerchantLimitRow): MerchantLimit {
  const o = overrideFromRow(row);
  return create(MerchantLimitSchema, {
    merchantId: row.merchant_id,
    bankId: o.bankId,
    enabled: o.enabled ?? undefined,
    minAmount: o.minAmount == null ? undefined : BigInt(o.minAmount),
    maxAmount: o.maxAmount == null ? undefined : BigInt(o.maxAmount),
  });
}

export function receivingAccountMessage(row: ReceivingAccountRow, bankName: string): ReceivingAccount {
  return create(ReceivingAccountSchema, {
    id: row.id,
    bankId: row.bank_id,
    bankName,
    accountName: row.account_name,
    iban: row.iban,
    active: Boolean(row.active),
    fastEnabled: Boolean(row.fast_enabled),
    sandbox: Boolean(row.sandbox),
    createdAt: timestampFromDate(new Date(Number(row.created_at))),
    updatedAt: timestampFromDate(new Date(Number(row.updated_at))),
  });
}

export function bankNotFound(bankId: string) {
  return serviceError(Code.NotFound, "BANK_NOT_FOUND", `no bank with id "${bankId}"`);
}

export function accountNotFound(accountId: string) {
  return serviceError(Code.NotFound, "ACCOUNT_NOT_FOUND", `no receiving account with id "${accountId}"`);
}

/** Every bank, Turkish name order. */
export async function listBankRows(db: Db, filter: { activeOnly?: boolean } = {}): Promise<BankRow[]> {
  const query = db<BankRow>("banks").select("*");
  if (filter.activeOnly) query.where({ active: true });
  const rows = (await query);
  return rows.sort(compareBankNames);
}

/** The bank, or BANK_NOT_FOUND. `forUpdate` locks it until the transaction ends. */
export async function getBankRow(db: Db, bankId: string, options: { forUpdate?: boolean } = {}): Promise<BankRow> {
  const query = db<BankRow>("banks").where({ id: bankId }).first();
  const row = (await (options.forUpdate ? locked(db, query) : query));
  if (!row) throw bankNotFound(bankId);
  return row;
}

export async function getFastSettingsRow(db: Db, options: { forUpdate?: boolean } = {}): Promise<FastSettingsRow> {
  const query = db<FastSettingsRow>("fast_settings").where({ id: 1 }).first();
  const row = (await (options.forUpdate ? locked(db, query) : query));
  // The catalog migration writes the row; its absence means a damaged database.
  if (!row) throw new Error("fast_settings row is missing");
  return row;
}

export async function listMerchantLimitRows(db: Db, merchantId: string): Promise<MerchantLimitRow[]> {
  return (await db<MerchantLimitRow>("merchant_limits").where({ merchant_id: merchantId }).orderBy("bank_id"));
}

export interface AccountWithBank extends ReceivingAccountRow {
  bank_name: string;
}

const accountColumns = ["a.*", "b.name as bank_name"] as const;

/** Accounts with their bank's name, ordered by bank name, then IBAN. */
export async function listAccountRows(db: Db, filter: { bankId?: string; activeOnly?: boolean; sandbox?: boolean } = {}): Promise<AccountWithBank[]> {
  const query = db("receiving_accounts as a")
    .join("banks as b", "b.id", "a.bank_id")
    .select(...accountColumns);
  if (filter.bankId) query.where("a.bank_id", filter.bankId);
  if (filter.activeOnly) query.where("a.active", true);
  if (filter.sandbox !== undefined) query.where("a.sandbox", filter.sandbox);
  const rows = (await query) as AccountWithBank[];
  const key = (row: AccountWithBank) => ({ name: row.bank_name, code: row.bank_id, id: row.iban });
  return rows.sort((x, y) => compareBankNames(key(x), key(y)));
}

export async function getAccountRow(db: Db, accountId: string): Promise<AccountWithBank> {
  const row = await db("receiving_accounts as a")
    .join("banks as b", "b.id", "a.bank_id")
    .where("a.id", accountId)
    .first<AccountWithBank | undefined>(...accountColumns);
  if (!row) throw accountNotFound(accountId);
  return row;
}
