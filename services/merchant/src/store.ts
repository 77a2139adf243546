import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { MerchantChangedSchema, type Merchant } from "@payments/contracts/merchant";
import { newId, newToken, recordEvent, serviceError, type Clock } from "@payments/kit";
import type { MerchantContext } from "./context.js";
import { LATE_PAYMENT_RULES, OVERPAYMENT_RULES, readRule, UNDERPAYMENT_RULES, type MerchantChange, type MerchantStatusName, type PaymentRules, type RateLimit } from "./merchant.js";
import { timestampFromMs, toMerchantMessage } from "./merchant-message.js";
import { SecretBoxError, type SecretBox } from "./secret-box.js";

/** A `merchants` row as both dialects return it. */
export interface MerchantRow {
  id: string;
  name: string;
  status: string;
  sandbox: boolean | number;
  api_key: string;
  allowed_ips: string;
  callback_url: string | null;
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  underpayment: string;
  overpayment: string;
  late_payment: string;
  /** Null: none set, the name is shown (migration 20261127000000). */
  display_name: string | null;
  /** Kuruş; null: no four-eyes on the merchant's own withdrawals (migration 20261216000000). BIGINT: MySQL may answer a string. */
  withdrawal_approval_threshold: number | string | null;
  created_at: number | string;
  updated_at: number | string;
}

export interface SecretRow {
  id: string;
  merchant_id: string;
  /** The API key it belongs to (migration 20261222000000; every API secret has one). Webhook secrets have no column. */
  api_key?: string | null;
  generation: number;
  sealed: string;
  created_at: number | string;
  expires_at: number | string | null;
}

export interface MerchantRecord {
  id: string;
  name: string;
  status: MerchantStatusName;
  sandbox: boolean;
  apiKey: string;
  allowedIps: string[];
  callbackUrl: string | null;
  rateLimit: RateLimit;
  paymentRules: PaymentRules;
  /** What the checkout page shows; null: none set, the name is shown (see displayNameOf). */
  displayName: string | null;
  /** Kuruş: a withdrawal its own users create above this waits for a second user of the merchant; null: none. */
  withdrawalApprovalThreshold: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface SecretRecord {
  id: string;
  merchantId: string;
  generation: number;
  sealed: string;
  createdAt: number;
  expiresAt: number | null;
}

/** The columns a change may set (besides updated_at). */
export type MerchantPatch = Partial<Pick<MerchantRow, "status" | "sandbox" | "allowed_ips" | "callback_url" | "rate_limit_per_second" | "rate_limit_burst" | "underpayment" | "overpayment" | "late_payment" | "display_name" | "withdrawal_approval_threshold">>;

function parseIps(text: string): string[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

export function toMerchantRecord(row: MerchantRow): MerchantRecord {
  return {
    id: row.id,
    name: row.name,
    status: row.status === "active" ? "active" : "disabled",
    sandbox: Boolean(row.sandbox),
    apiKey: row.api_key,
    allowedIps: parseIps(row.allowed_ips),
    callbackUrl: row.callback_url,
    rateLimit: { perSecond: row.rate_limit_per_second, burst: row.rate_limit_burst },
    paymentRules: {
      underpayment: readRule(UNDERPAYMENT_RULES, row.underpayment),
      overpayment: readRule(OVERPAYMENT_RULES, row.overpayment),
      latePayment: readRule(LATE_PAYMENT_RULES, row.late_payment),
    },
    displayName: row.display_name,
    withdrawalApprovalThreshold: row.withdrawal_approval_threshold === null ? null : Number(row.withdrawal_approval_threshold),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** A secret row (API or webhook secret: the same columns) as the service handles it. */
export function toSecretRecord(row: SecretRow): SecretRecord {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    generation: Number(row.generation),
    sealed: row.sealed,
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

export function allowedIpsColumn(ips: readonly string[]): string {
  return JSON.stringify(ips);
}

export function merchantNotFound(merchantId: string) {
  return serviceError(Code.NotFound, "MERCHANT_NOT_FOUND", `merchant ${JSON.stringify(merchantId)} does not exist`);
}

export async function findMerchant(db: Knex, merchantId: string): Promise<MerchantRecord | undefined> {
  const row = await db<MerchantRow>("merchants").where({ id: merchantId }).first();
  return row ? toMerchantRecord(row) : undefined;
}

/** What the public view of a merchant shows of a secret: its lifetime, never its sealed value. */
export type SecretInfo = Omit<SecretRecord, "sealed">;

export type SecretInfoRow = Omit<SecretRow, "sealed" | "api_key">;

/** The columns of a SecretInfo: the sealed value is not even read. */
export const SECRET_INFO_COLUMNS = ["id", "merchant_id", "generation", "created_at", "expires_at"] as const;

export function toSecretInfo(row: SecretInfoRow): SecretInfo {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    generation: Number(row.generation),
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

/** Secret metadata of each merchant's primary key (the Merchant message's), newest first. */
export async function secretsOf(db: Knex, merchantIds: readonly string[]): Promise<Map<string, SecretInfo[]>> {
  const byMerchant = new Map<string, SecretInfo[]>(merchantIds.map((id) => [id, []]));
  if (merchantIds.length === 0) return byMerchant;
  const rows = await db("merchant_secrets as s")
    .join("merchants as m", (on) => on.on("m.id", "=", "s.merchant_id").andOn("m.api_key", "=", "s.api_key"))
    .select<SecretInfoRow[]>(...SECRET_INFO_COLUMNS.map((c) => `s.${c}`))
    .whereIn("s.merchant_id", [...merchantIds])
    .orderBy([{ column: "s.merchant_id" }, { column: "s.generation", order: "desc" }]);
  for (const row of rows) byMerchant.get(row.merchant_id)?.push(toSecretInfo(row));
  return byMerchant;
}

/** A merchant row joined with one secret's columns (all null when it has none), under names that cannot clash. */
type MerchantSecretRow = MerchantRow & {
  secret_id: string | null;
  secret_generation: number | null;
  secret_sealed?: string | null;
  secret_created_at: number | string | null;
  secret_expires_at: number | string | null;
};

function joinedSecret(row: MerchantSecretRow): SecretInfo | undefined {
  if (row.secret_id === null || row.secret_generation === null || row.secret_created_at === null) return undefined;
  return toSecretInfo({ id: row.secret_id, merchant_id: row.id, generation: row.secret_generation, created_at: row.secret_created_at, expires_at: row.secret_expires_at });
}

/**
 * A merchant and its primary key's secret metadata, newest first, in one query (GetMerchant is
 * asked on every deposit a cache does not answer). The sealed values are not read.
 */
export async function findMerchantWithSecrets(db: Knex, merchantId: string): Promise<{ merchant: MerchantRecord; secrets: SecretInfo[] } | undefined> {
  const rows = await db("merchants as m")
    .leftJoin("merchant_secrets as s", (on) => on.on("s.merchant_id", "=", "m.id").andOn("s.api_key", "=", "m.api_key"))
    .where("m.id", merchantId)
    .select<MerchantSecretRow[]>("m.*", "s.id as secret_id", "s.generation as secret_generation", "s.created_at as secret_created_at", "s.expires_at as secret_expires_at")
    .orderBy("s.generation", "desc");
  const [first] = rows;
  if (!first) return undefined;
  return { merchant: toMerchantRecord(first), secrets: rows.map(joinedSecret).filter((s): s is SecretInfo => s !== undefined) };
}

/** The webhook secret columns joined onto a merchant row (all null when it has none that signs). */
type WebhookJoinedRow = MerchantSecretRow & {
  webhook_id: string | null;
  webhook_generation: number | null;
  webhook_sealed: string | null;
  webhook_created_at: number | string | null;
  webhook_expires_at: number | string | null;
};

/**
 * A merchant, its primary key's current secret (the newest that verifies at `now`; undefined
 * when none does: callbacks are signed with the primary key's, decisions.md) and its webhook
 * secrets that sign at `now` (current first), in one query: what the
 * callback-sender asks for before an attempt its cache does not answer. Rows are API
 * secrets × webhook secrets, a handful at most (two of each during rotations).
 */
export async function findMerchantWithCurrentSecret(
  db: Knex,
  merchantId: string,
  now: number,
): Promise<{ merchant: MerchantRecord; current: SecretRecord | undefined; webhookSecrets: SecretRecord[] } | undefined> {
  const rows = await db("merchants as m")
    .leftJoin("merchant_secrets as s", (on) =>
      on
        .on("s.merchant_id", "=", "m.id")
        .andOn("s.api_key", "=", "m.api_key")
        .andOn((valid) => valid.onNull("s.expires_at").orOnVal("s.expires_at", ">", now)),
    )
    .leftJoin("merchant_webhook_secrets as w", (on) =>
      on.on("w.merchant_id", "=", "m.id").andOn((valid) => valid.onNull("w.expires_at").orOnVal("w.expires_at", ">", now)),
    )
    .where("m.id", merchantId)
    .select<WebhookJoinedRow[]>(
      "m.*",
      "s.id as secret_id",
      "s.generation as secret_generation",
      "s.sealed as secret_sealed",
      "s.created_at as secret_created_at",
      "s.expires_at as secret_expires_at",
      "w.id as webhook_id",
      "w.generation as webhook_generation",
      "w.sealed as webhook_sealed",
      "w.created_at as webhook_created_at",
      "w.expires_at as webhook_expires_at",
    )
    .orderBy([{ column: "s.generation", order: "desc" }, { column: "w.generation", order: "desc" }]);
  const [row] = rows;
  if (!row) return undefined;
  const info = joinedSecret(row);
  const current = info && typeof row.secret_sealed === "string" ? { ...info, sealed: row.secret_sealed } : undefined;
  const webhookSecrets = rows
    .filter((r) => r.secret_id === row.secret_id && r.webhook_id !== null && r.webhook_sealed !== null)
    .map((r) =>
      toSecretRecord({
        id: r.webhook_id!,
        merchant_id: r.id,
        generation: Number(r.webhook_generation),
        sealed: r.webhook_sealed!,
        created_at: r.webhook_created_at ?? 0,
        expires_at: r.webhook_expires_at,
      }),
    );
  return { merchant: toMerchantRecord(row), current, webhookSecrets };
}

/** One key's secrets that verify signatures at `now`, current first. */
export async function validSecretsOf(db: Knex, merchantId: string, apiKey: string, now: number): Promise<SecretRecord[]> {
  const rows = await db<SecretRow>("merchant_secrets")
    .where({ merchant_id: merchantId, api_key: apiKey })
    .andWhere((q) => {
      q.whereNull("expires_at").orWhere("expires_at", ">", now);
    })
    .orderBy("generation", "desc");
  return rows.map(toSecretRecord);
}

/** A fresh API key: looked up by index on every request, so unique and unguessable. */
export function newApiKey(): string {
  return `pk_${newToken(24)}`;
}

/** A fresh API secret, in plain text: returned once, then only kept sealed. */
export function newApiSecret(): string {
  return `sk_${newToken(32)}`;
}

export async function insertMerchant(trx: Knex, merchant: MerchantRecord): Promise<void> {
  await trx<MerchantRow>("merchants").insert({
    id: merchant.id,
    name: merchant.name,
    status: merchant.status,
    sandbox: merchant.sandbox,
    api_key: merchant.apiKey,
    allowed_ips: allowedIpsColumn(merchant.allowedIps),
    callback_url: merchant.callbackUrl,
    rate_limit_per_second: merchant.rateLimit.perSecond,
    rate_limit_burst: merchant.rateLimit.burst,
    underpayment: merchant.paymentRules.underpayment,
    overpayment: merchant.paymentRules.overpayment,
    late_payment: merchant.paymentRules.latePayment,
    display_name: merchant.displayName,
    withdrawal_approval_threshold: merchant.withdrawalApprovalThreshold,
    created_at: merchant.createdAt,
    updated_at: merchant.updatedAt,
  });
}

/** A new current secret of one key. `generation` counts per merchant, across its keys (nextGeneration). */
export async function insertSecret(
  trx: Knex,
  secretBox: SecretBox,
  key: { merchantId: string; apiKey: string },
  generation: number,
  plaintext: string,
  now: number,
): Promise<void> {
  const merchantId = key.merchantId;
  await trx<SecretRow>("merchant_secrets").insert({
    id: newId("sec"),
    merchant_id: merchantId,
    api_key: key.apiKey,
    generation,
    sealed: secretBox.seal(plaintext, merchantId),
    created_at: now,
    expires_at: null,
  });
}

/** The next secret generation of a merchant (all its keys'): called with the merchant row locked, so none is taken twice. */
export async function nextGeneration(trx: Knex, merchantId: string): Promise<number> {
  const latest = await trx<SecretRow>("merchant_secrets").where({ merchant_id: merchantId }).max({ generation: "generation" }).first();
  return Number(latest?.generation ?? 0) + 1;
}

/**
 * The event that tells credential caches (the gateway) to drop this merchant; `now` is the
 * change's updated_at. `apiKey`: the key the change is about (default the primary), so a
 * cache that remembered it as unknown forgets that too.
 */
export async function recordMerchantChanged(
  trx: Knex.Transaction,
  clock: Clock,
  merchant: MerchantRecord,
  change: MerchantChange,
  now: number,
  apiKey: string = merchant.apiKey,
): Promise<void> {
  await recordEvent(trx, clock, MERCHANT_CHANGED_TOPIC, MerchantChangedSchema, {
    merchantId: merchant.id,
    apiKey,
    change,
    occurredAt: timestampFromMs(now),
  });
}

/**
 * One change to an existing merchant, in one transaction: the row (locked by the UPDATE,
 * so concurrent changes to the same merchant queue up on both dialects), whatever else
 * `within` writes, and the MerchantChanged event. Publishes after the commit.
 */
export async function changeMerchant(
  ctx: MerchantContext,
  merchantId: string,
  change: MerchantChange,
  patch: MerchantPatch,
  within?: (trx: Knex.Transaction, merchant: MerchantRecord, now: number) => Promise<void>,
): Promise<Merchant> {
  return (await changeMerchantWith(ctx, merchantId, change, patch, async (trx, merchant, now) => within?.(trx, merchant, now))).merchant;
}

/**
 * changeMerchant, with what `within` answers (read in the same transaction: a key as changed)
 * and the event naming `options.apiKey` (the key the change is about) instead of the primary.
 */
export async function changeMerchantWith<T>(
  ctx: MerchantContext,
  merchantId: string,
  change: MerchantChange,
  patch: MerchantPatch,
  within: (trx: Knex.Transaction, merchant: MerchantRecord, now: number) => Promise<T>,
  options: { apiKey?: string } = {},
): Promise<{ merchant: Merchant; result: T }> {
  const now = ctx.clock.now().getTime();
  const { merchant, secrets, result } = await ctx.db.transaction(async (trx) => {
    await trx<MerchantRow>("merchants")
      .where({ id: merchantId })
      .update({ ...patch, updated_at: now });
    const merchant = await findMerchant(trx, merchantId);
    if (!merchant) throw merchantNotFound(merchantId);
    const result = await within(trx, merchant, now);
    await recordMerchantChanged(trx, ctx.clock, merchant, change, now, options.apiKey);
    const secrets = (await secretsOf(trx, [merchantId])).get(merchantId) ?? [];
    return { merchant, secrets, result };
  });
  ctx.outbox.nudge();
  return { merchant: toMerchantMessage(merchant, secrets, now), result };
}

/**
 * A stored secret in plain text, for a caller that must sign or verify with it (`context`:
 * what it was sealed under; a webhook secret's is webhookSealContext). One that
 * does not open (altered, or MASTER_KEY changed) is logged and refused as SECRET_UNREADABLE,
 * never handed out wrong.
 */
export function openSecret(ctx: Pick<MerchantContext, "secretBox" | "logger">, secret: SecretRecord, context: string = secret.merchantId): string {
  try {
    return ctx.secretBox.open(secret.sealed, context);
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err;
    ctx.logger.error({ merchantId: secret.merchantId, secretId: secret.id, err }, "a stored secret does not decrypt: altered, or MASTER_KEY changed");
    throw serviceError(Code.Internal, "SECRET_UNREADABLE", "a stored secret of this merchant cannot be decrypted");
  }
}
