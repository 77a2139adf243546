import type { Knex } from "knex";

/** What happened: a sign-in, a refused one (with its reason), a refusal for too many failures, a sign-out. */
export type SignInEventKind = "sign_in" | "sign_in_failed" | "sign_in_throttled" | "sign_out" | "password_set" | "totp_enrolled" | "totp_removed";

export interface SignInEvent {
  event: SignInEventKind;
  channel: "browser" | "cli";
  email: string;
  operatorId?: string | undefined;
  /** A merchant user's event (the merchant dashboard's sign-in): their id, and no operatorId. */
  merchantUserId?: string | undefined;
  ip: string;
  /** A machine word (`bad_password`, `totp_required`, …), never the password or code typed. */
  reason?: string | undefined;
}

/** Appends one event; the table is never updated or deleted from. */
export async function recordSignInEvent(db: Knex, event: SignInEvent, now: number): Promise<void> {
  await db("sign_in_events").insert({
    at: now,
    event: event.event,
    channel: event.channel,
    // Whatever was typed, bounded: a failed attempt may name any string.
    email: event.email.slice(0, 254),
    operator_id: event.operatorId ?? null,
    ...(event.merchantUserId ? { merchant_user_id: event.merchantUserId } : {}),
    ip: event.ip.slice(0, 64),
    reason: event.reason ?? null,
  });
}
