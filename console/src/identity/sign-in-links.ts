import type { Knex } from "knex";
import { hashSecret, newSecret } from "./secret-token.js";

/** The operators' links (`sign_in_links`) or the merchant users' (`merchant_sign_in_links`). */
export interface LinkStore {
  table: "sign_in_links" | "merchant_sign_in_links";
  owner: "operator_id" | "merchant_user_id";
}

export const OPERATOR_LINKS: LinkStore = { table: "sign_in_links", owner: "operator_id" };
export const MERCHANT_LINKS: LinkStore = { table: "merchant_sign_in_links", owner: "merchant_user_id" };

/** Why a link was made: a new account, or a reset of a forgotten password (or lost TOTP). */
export type LinkPurpose = "create" | "reset";

/**
 * A one-time link for `operatorId`: the token goes into the URL once and only its hash is kept.
 * Earlier unused links of the same operator stop working, so only the newest link is live.
 */
export async function createSignInLink(
  db: Knex,
  input: { operatorId: string; purpose: LinkPurpose; createdBy: string; now: number; ttlMs: number },
  store: LinkStore = OPERATOR_LINKS,
): Promise<{ token: string; expiresAt: number }> {
  const { secret, hash } = newSecret();
  const expiresAt = input.now + input.ttlMs;
  const write = async (trx: Knex) => {
    await trx(store.table).where({ [store.owner]: input.operatorId }).whereNull("used_at").update({ used_at: input.now });
    await trx(store.table).insert({
      token_hash: hash,
      [store.owner]: input.operatorId,
      purpose: input.purpose,
      created_by: input.createdBy,
      created_at: input.now,
      expires_at: expiresAt,
      used_at: null,
    });
  };
  // Within the caller's transaction (the change that makes the link, with its audit row) as it
  // is: the kit's retried transactions take no transaction inside them.
  if ((db as { isTransaction?: boolean }).isTransaction === true) await write(db);
  else await db.transaction(write);
  return { token: secret, expiresAt };
}

/** The operator a link is for, while it is unused and unexpired (for the page that asks for the new password). */
export async function peekSignInLink(db: Knex, token: string, now: number, store: LinkStore = OPERATOR_LINKS): Promise<{ operatorId: string; purpose: LinkPurpose } | undefined> {
  const row = (await db(store.table).where({ token_hash: hashSecret(token) }).first()) as
    | (Record<string, string> & { purpose: string; expires_at: number; used_at: number | null })
    | undefined;
  if (!row || row.used_at !== null || Number(row.expires_at) <= now) return undefined;
  return { operatorId: String(row[store.owner]), purpose: row.purpose === "reset" ? "reset" : "create" };
}

/**
 * Uses the link up, in `trx`: a conditional UPDATE, so of two submissions of the same link only
 * one gets the operator; the other (and any later one) gets undefined.
 */
export async function consumeSignInLink(trx: Knex, token: string, now: number, store: LinkStore = OPERATOR_LINKS): Promise<{ operatorId: string; purpose: LinkPurpose } | undefined> {
  const hash = hashSecret(token);
  const row = (await trx(store.table).where({ token_hash: hash }).first()) as (Record<string, string> & { purpose: string }) | undefined;
  if (!row) return undefined;
  const changed = await trx(store.table).where({ token_hash: hash }).whereNull("used_at").andWhere("expires_at", ">", now).update({ used_at: now });
  if (changed !== 1) return undefined;
  return { operatorId: String(row[store.owner]), purpose: row.purpose === "reset" ? "reset" : "create" };
}
