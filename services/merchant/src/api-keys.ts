import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import { ApiKeySchema, type ApiKey } from "@payments/contracts/merchant";
import { currentOperator, isMerchantUser, type ApiKeyScope } from "@payments/access";
import { serviceError } from "@payments/kit";
import { mayHoldKey, readScopes, WITHDRAWAL_KEY_HOLDERS } from "./api-key-rules.js";
import { expiryAfterRotation, secretValidAt } from "./merchant.js";
import { timestampFromMs } from "./merchant-message.js";
import type { SecretBox } from "./secret-box.js";
import {
  findMerchant,
  insertSecret,
  merchantNotFound,
  nextGeneration,
  SECRET_INFO_COLUMNS,
  toMerchantRecord,
  toSecretInfo,
  validSecretsOf,
  type MerchantRecord,
  type MerchantRow,
  type SecretInfo,
  type SecretInfoRow,
  type SecretRow,
} from "./store.js";

const TABLE = "merchant_api_keys";

/** A `merchant_api_keys` row as both dialects return it. */
export interface ApiKeyRow {
  api_key: string;
  merchant_id: string;
  label: string | null;
  scopes: string;
  trusted: boolean | number;
  created_at: number | string;
  created_by: string;
  revoked_at: number | string | null;
  revoked_by: string | null;
}

export interface ApiKeyRecord {
  apiKey: string;
  merchantId: string;
  /** Null: the primary key made with the merchant (pages name it in their language). */
  label: string | null;
  scopes: ApiKeyScope[];
  trusted: boolean;
  createdAt: number;
  createdBy: string;
  revokedAt: number | null;
  revokedBy: string | null;
}

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    apiKey: row.api_key,
    merchantId: row.merchant_id,
    label: row.label,
    scopes: readScopes(row.scopes),
    trusted: Boolean(row.trusted),
    createdAt: Number(row.created_at),
    createdBy: row.created_by,
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    revokedBy: row.revoked_by,
  };
}

export async function insertApiKey(trx: Knex, key: ApiKeyRecord): Promise<void> {
  await trx<ApiKeyRow>(TABLE).insert({
    api_key: key.apiKey,
    merchant_id: key.merchantId,
    label: key.label,
    scopes: JSON.stringify(key.scopes),
    trusted: key.trusted,
    created_at: key.createdAt,
    created_by: key.createdBy,
    revoked_at: key.revokedAt,
    revoked_by: key.revokedBy,
  });
}

/** One key of one merchant (another merchant's key is not found, as if it did not exist). */
export async function findApiKey(db: Knex, merchantId: string, apiKey: string): Promise<ApiKeyRecord | undefined> {
  const row = await db<ApiKeyRow>(TABLE).where({ api_key: apiKey, merchant_id: merchantId }).first();
  return row ? toApiKeyRecord(row) : undefined;
}

/** The merchant's keys, oldest first (the primary is the oldest: it was made with the merchant). */
export async function apiKeysOf(db: Knex, merchantId: string): Promise<ApiKeyRecord[]> {
  const rows = await db<ApiKeyRow>(TABLE).where({ merchant_id: merchantId }).orderBy([{ column: "created_at" }, { column: "api_key" }]);
  return rows.map(toApiKeyRecord);
}

/** Secret metadata of a merchant's keys, newest first, by key; the sealed values are not read. */
export async function keySecretsOf(db: Knex, merchantId: string, apiKey?: string): Promise<Map<string, SecretInfo[]>> {
  const rows = await db("merchant_secrets")
    .select<Array<SecretInfoRow & { api_key: string }>>(...SECRET_INFO_COLUMNS, "api_key")
    .where({ merchant_id: merchantId, ...(apiKey !== undefined ? { api_key: apiKey } : {}) })
    .orderBy("generation", "desc");
  const byKey = new Map<string, SecretInfo[]>();
  for (const row of rows) {
    const list = byKey.get(row.api_key) ?? [];
    list.push(toSecretInfo(row));
    byKey.set(row.api_key, list);
  }
  return byKey;
}

/** The public view of a key: what it may do and its secrets' lifetimes, never a secret value. */
export function toApiKeyMessage(key: ApiKeyRecord, secrets: readonly SecretInfo[], now: number, primaryKey: string): ApiKey {
  return create(ApiKeySchema, {
    id: key.apiKey,
    merchantId: key.merchantId,
    label: key.label ?? "",
    scopes: key.scopes,
    trusted: key.trusted,
    primary: key.apiKey === primaryKey,
    createdAt: timestampFromMs(key.createdAt),
    createdBy: key.createdBy,
    revokedAt: key.revokedAt === null ? undefined : timestampFromMs(key.revokedAt),
    revokedBy: key.revokedBy ?? "",
    secrets: secrets.map((secret) => ({
      id: secret.id,
      createdAt: timestampFromMs(secret.createdAt),
      expiresAt: secret.expiresAt === null ? undefined : timestampFromMs(secret.expiresAt),
      valid: secretValidAt(secret, now),
    })),
  });
}

/** One key as the RPCs answer it, read (inside a change's transaction: as changed). */
export async function apiKeyView(db: Knex, merchant: Pick<MerchantRecord, "id" | "apiKey">, apiKey: string, now: number): Promise<ApiKey> {
  const key = await findApiKey(db, merchant.id, apiKey);
  if (!key) throw apiKeyNotFound(apiKey);
  const secrets = (await keySecretsOf(db, merchant.id, apiKey)).get(apiKey) ?? [];
  return toApiKeyMessage(key, secrets, now, merchant.apiKey);
}

export function apiKeyNotFound(apiKey: string) {
  return serviceError(Code.NotFound, "API_KEY_NOT_FOUND", `the merchant has no API key ${JSON.stringify(apiKey.slice(0, 64))}`);
}

/** A revoked key stays so: nothing is done with it any more. */
export function apiKeyRevoked(apiKey: string) {
  return serviceError(Code.FailedPrecondition, "API_KEY_REVOKED", `the API key ${apiKey} is revoked`);
}

/** The merchant and the key a request names: the primary key when it names none. */
export async function requireApiKey(db: Knex, merchantId: string, apiKey: string): Promise<{ merchant: MerchantRecord; key: ApiKeyRecord }> {
  const merchant = await findMerchant(db, merchantId);
  if (!merchant) throw merchantNotFound(merchantId);
  const key = await findApiKey(db, merchantId, apiKey === "" ? merchant.apiKey : apiKey);
  if (!key) throw apiKeyNotFound(apiKey);
  return { merchant, key };
}

/**
 * A merchant's developer integrates, but does not send money out: they may not be shown a
 * secret of a key that can withdraw (create one, rotate its secret) nor manage one (revoke it
 * or its secrets). The access table admits developers to these RPCs for the keys without
 * `withdrawals`, which only the database knows, so the handler asks here, from the verified
 * caller, before it changes anything. Operators (admins, by the table) and owners and finance
 * users pass.
 */
export function requireMayHold(key: { scopes: readonly string[] }, doing: string): void {
  const caller = currentOperator()?.operator;
  if (!caller || !isMerchantUser(caller) || mayHoldKey(caller.role, key.scopes)) return;
  throw serviceError(
    Code.PermissionDenied,
    "PERMISSION_DENIED",
    `only the merchant's ${WITHDRAWAL_KEY_HOLDERS.join(" or ")} users may ${doing} an API key that can withdraw; the ${caller.role} role may ${doing} keys without the withdrawals scope`,
  );
}

/** What GetCredentials needs of a key: its merchant and what the key may do. */
export interface CredentialKey {
  merchant: MerchantRecord;
  scopes: ApiKeyScope[];
  trusted: boolean;
  revoked: boolean;
}

/** A key of GetCredentials with its merchant, in one query by the key's primary index (as the merchant's unique api_key was before). */
export async function findCredentialKey(db: Knex, apiKey: string): Promise<CredentialKey | undefined> {
  const row = await db(`${TABLE} as k`)
    .join("merchants as m", "m.id", "k.merchant_id")
    .where("k.api_key", apiKey)
    .first<(MerchantRow & { key_scopes: string; key_trusted: boolean | number; key_revoked_at: number | string | null }) | undefined>(
      "m.*",
      "k.scopes as key_scopes",
      "k.trusted as key_trusted",
      "k.revoked_at as key_revoked_at",
    );
  if (!row) return undefined;
  return { merchant: toMerchantRecord(row), scopes: readScopes(row.key_scopes), trusted: Boolean(row.key_trusted), revoked: row.key_revoked_at !== null };
}

/**
 * A new current secret of one key, inside the merchant's change transaction (the merchant row
 * is locked, so the generation cannot be taken twice): the key's older secrets that still
 * verify get `now + grace` (or keep an earlier end), as a rotation always did.
 */
export async function rotateKeySecretIn(trx: Knex, secretBox: SecretBox, key: { merchantId: string; apiKey: string }, plaintext: string, now: number, graceMs: number): Promise<void> {
  for (const secret of await validSecretsOf(trx, key.merchantId, key.apiKey, now)) {
    const expiresAt = expiryAfterRotation(secret.expiresAt, now, graceMs);
    if (expiresAt !== secret.expiresAt) await trx<SecretRow>("merchant_secrets").where({ id: secret.id }).update({ expires_at: expiresAt });
  }
  await insertSecret(trx, secretBox, key, await nextGeneration(trx, key.merchantId), plaintext, now);
}

/** Keys of a merchant that are not revoked, counted (MAX_ACTIVE_API_KEYS). */
export async function activeKeyCount(db: Knex, merchantId: string): Promise<number> {
  const row = (await db(TABLE).where({ merchant_id: merchantId }).whereNull("revoked_at").count({ n: "*" }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}
