import { randomBytes } from "node:crypto";
import type { Knex } from "knex";
import { newId } from "@payments/kit";
import { expiryAfterRotation } from "./merchant.js";
import { SECRET_INFO_COLUMNS, toSecretInfo, toSecretRecord, type SecretInfo, type SecretInfoRow, type SecretRecord, type SecretRow } from "./store.js";
import type { SecretBox } from "./secret-box.js";

/**
 * Webhook secrets (Standard Webhooks, `whsec_<base64>`): what callbacks carry in
 * `webhook-signature`, beside the X-Signature made with the API secret. Kept apart from the
 * API secrets (table `merchant_webhook_secrets`) because they rotate on their own: a merchant
 * rolling its webhook receiver must not have to roll its API client too.
 */

const TABLE = "merchant_webhook_secrets";
/** 32 random bytes: the standard asks for 24 to 64. */
const WEBHOOK_SECRET_BYTES = 32;

/** A fresh webhook secret in plain text: returned once, then only kept sealed. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(WEBHOOK_SECRET_BYTES).toString("base64")}`;
}

/**
 * The associated data a webhook secret is sealed under: its merchant and its purpose, so a
 * sealed API secret copied into this table (or the other way round) does not open.
 */
export function webhookSealContext(merchantId: string): string {
  return `${merchantId}:webhook`;
}

/** Webhook secrets that sign callbacks at `now`, current first. */
export async function validWebhookSecretsOf(db: Knex, merchantId: string, now: number): Promise<SecretRecord[]> {
  const rows: SecretRow[] = await db<SecretRow>(TABLE)
    .where({ merchant_id: merchantId })
    .andWhere((q) => {
      q.whereNull("expires_at").orWhere("expires_at", ">", now);
    })
    .orderBy("generation", "desc");
  return rows.map(toSecretRecord);
}

/** Webhook secret metadata of a merchant, newest first; the sealed values are not read. */
export async function webhookSecretsInfoOf(db: Knex, merchantId: string): Promise<SecretInfo[]> {
  const rows = await db<SecretRow>(TABLE)
    .select<SecretInfoRow[]>(...SECRET_INFO_COLUMNS)
    .where({ merchant_id: merchantId })
    .orderBy("generation", "desc");
  return rows.map(toSecretInfo);
}

export async function insertWebhookSecret(trx: Knex, secretBox: SecretBox, merchantId: string, generation: number, plaintext: string, now: number): Promise<void> {
  await trx<SecretRow>(TABLE).insert({
    id: newId("whs"),
    merchant_id: merchantId,
    generation,
    sealed: secretBox.seal(plaintext, webhookSealContext(merchantId)),
    created_at: now,
    expires_at: null,
  });
}

/**
 * A rotation inside the merchant's change transaction (the merchant row is locked, so the
 * generation cannot be taken twice): older secrets that still sign get `now + grace` (or keep
 * an earlier end), and the new one becomes current.
 */
export async function rotateWebhookSecretIn(trx: Knex, secretBox: SecretBox, merchantId: string, plaintext: string, now: number, graceMs: number): Promise<void> {
  for (const secret of await validWebhookSecretsOf(trx, merchantId, now)) {
    const expiresAt = expiryAfterRotation(secret.expiresAt, now, graceMs);
    if (expiresAt !== secret.expiresAt) await trx<SecretRow>(TABLE).where({ id: secret.id }).update({ expires_at: expiresAt });
  }
  const latest = await trx<SecretRow>(TABLE).where({ merchant_id: merchantId }).max({ generation: "generation" }).first();
  await insertWebhookSecret(trx, secretBox, merchantId, Number(latest?.generation ?? 0) + 1, plaintext, now);
}
