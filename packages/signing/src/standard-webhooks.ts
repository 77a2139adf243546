import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Standard Webhooks (https://www.standardwebhooks.com), which every callback carries beside
 * its X-Signature: `webhook-id` (the event id), `webhook-timestamp` (Unix seconds of the
 * attempt) and `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256>` over
 * `${id}.${timestamp}.${body}`, keyed with the base64-decoded part of a `whsec_…` secret.
 * Kept here, with no dependency, so a merchant can verify with this package or with any
 * Standard Webhooks library (`standardwebhooks` on npm) alike.
 */

export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** The HMAC key of a `whsec_<base64>` secret; undefined when it is not one. */
export function webhookSecretKey(secret: string): Uint8Array | undefined {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return undefined;
  const text = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const key = Buffer.from(text, "base64");
  return key.length === 0 ? undefined : key;
}

function mac(key: Uint8Array, id: string, timestamp: string, body: Uint8Array | string): Buffer {
  const hmac = createHmac("sha256", key);
  hmac.update(`${id}.${timestamp}.`, "utf8");
  hmac.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  return hmac.digest();
}

/** One `v1,<base64>` signature of a message with one secret. Throws a TypeError for a secret that is not `whsec_<base64>`. */
export function standardWebhookSignature(secret: string, id: string, timestamp: string, body: Uint8Array | string): string {
  const key = webhookSecretKey(secret);
  if (!key) throw new TypeError("a webhook secret is `whsec_` followed by base64");
  return `v1,${mac(key, id, timestamp, body).toString("base64")}`;
}

/**
 * The three Standard Webhooks headers of one attempt, signed with each secret in turn
 * (current first; the rotated-out ones during their grace period), space-separated as the
 * standard allows, so a receiver holding either secret verifies.
 */
export function standardWebhookHeaders(secrets: readonly string[], id: string, timestamp: string, body: Uint8Array | string): Record<string, string> {
  if (secrets.length === 0) throw new TypeError("standardWebhookHeaders: at least one secret");
  return {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": secrets.map((secret) => standardWebhookSignature(secret, id, timestamp, body)).join(" "),
  };
}

/** Why a Standard Webhooks message was refused. */
export type StandardWebhookRefusalReason = "MISSING_HEADER" | "INVALID_TIMESTAMP" | "TIMESTAMP_OUT_OF_TOLERANCE" | "INVALID_SIGNATURE";

export type StandardWebhookVerificationResult =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: StandardWebhookRefusalReason; message: string };

export interface VerifyStandardWebhookOptions {
  /** Your webhook secret(s), `whsec_…`; several while rotating: it verifies if one matches. */
  secrets: string | readonly string[];
  /** Node's `req.headers` (any key case) or a fetch `Headers`. */
  headers: { get(name: string): string | null } | { readonly [name: string]: string | readonly string[] | undefined };
  /** The raw body exactly as received. */
  body: Uint8Array | ArrayBuffer | string;
  /** How far webhook-timestamp may be from now, either way. Default 300 (the standard's five minutes). */
  toleranceSeconds?: number;
  now?: Date;
}

function header(headers: VerifyStandardWebhookOptions["headers"], name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function") return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as { readonly [name: string]: string | readonly string[] | undefined };
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== name) continue;
    const value = record[key];
    return typeof value === "string" ? value : Array.isArray(value) ? value.join(" ") : undefined;
  }
  return undefined;
}

/**
 * Verifies a Standard Webhooks message: the three headers, a timestamp within the
 * tolerance, and one `v1,` signature (of possibly several) that matches one of the secrets,
 * compared in constant time. Never throws for what a request carries; throws a TypeError
 * for a wrong call (no secret, a secret that is not `whsec_…`).
 */
export function verifyStandardWebhook(options: VerifyStandardWebhookOptions): StandardWebhookVerificationResult {
  const secrets = typeof options.secrets === "string" ? [options.secrets] : [...options.secrets];
  if (secrets.length === 0) throw new TypeError("verifyStandardWebhook: at least one secret");
  const keys = secrets.map((secret) => {
    const key = webhookSecretKey(secret);
    if (!key) throw new TypeError("verifyStandardWebhook: every secret is `whsec_` followed by base64");
    return key;
  });
  const body = options.body instanceof ArrayBuffer ? new Uint8Array(options.body) : options.body;
  const id = header(options.headers, "webhook-id");
  const timestamp = header(options.headers, "webhook-timestamp");
  const signatures = header(options.headers, "webhook-signature");
  if (!id || !timestamp || !signatures) return { ok: false, reason: "MISSING_HEADER", message: "webhook-id, webhook-timestamp and webhook-signature are required" };
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: "INVALID_TIMESTAMP", message: "webhook-timestamp must be whole Unix seconds" };
  const tolerance = options.toleranceSeconds ?? 300;
  const skew = Number(timestamp) - Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(skew) > tolerance) {
    return { ok: false, reason: "TIMESTAMP_OUT_OF_TOLERANCE", message: `webhook-timestamp is ${Math.abs(skew)} s ${skew < 0 ? "in the past" : "in the future"}, more than ${tolerance} s` };
  }
  const given = signatures
    .split(" ")
    .filter((part) => part.startsWith("v1,"))
    .map((part) => Buffer.from(part.slice(3), "base64"));
  let matched = false;
  for (const key of keys) {
    const expected = mac(key, id, timestamp, body);
    // No early exit: the time taken does not reveal which secret or signature matched.
    for (const signature of given) if (signature.length === expected.length && timingSafeEqual(signature, expected)) matched = true;
  }
  if (!matched) return { ok: false, reason: "INVALID_SIGNATURE", message: "no webhook-signature matches: wrong secret, or the body, id or timestamp is not what was sent" };
  return { ok: true, id, timestamp: Number(timestamp) };
}
