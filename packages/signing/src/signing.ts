import { createHmac, timingSafeEqual } from "node:crypto";

export interface SignedParts {
  /** The exact X-Timestamp string. */
  timestamp: string;
  /** Upper-case HTTP method. */
  method: string;
  /** Path with its query string, exactly as sent, e.g. "/v1/deposit?x=1". */
  path: string;
  /** The raw body bytes as sent (empty for GET). */
  body: Uint8Array | string;
}

function hmac(secret: string, parts: SignedParts): Buffer {
  const mac = createHmac("sha256", secret);
  mac.update(`${parts.timestamp}${parts.method.toUpperCase()}${parts.path}`, "utf8");
  mac.update(typeof parts.body === "string" ? Buffer.from(parts.body, "utf8") : parts.body);
  return mac.digest();
}

/** HMAC-SHA256 of timestamp + METHOD + path + body, as lower-case hex. */
export function sign(secret: string, parts: SignedParts): string {
  return hmac(secret, parts).toString("hex");
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** Constant-time check of a hex signature against each secret; true when one matches. */
export function verify(secrets: readonly string[], parts: SignedParts, signature: string): boolean {
  if (!HEX_SHA256.test(signature)) return false;
  const given = Buffer.from(signature, "hex");
  let matched = false;
  for (const secret of secrets) {
    // No early exit: the time taken does not reveal which secret matched.
    if (timingSafeEqual(hmac(secret, parts), given)) matched = true;
  }
  return matched;
}

/** Unix seconds as the X-Timestamp string. */
export function unixTimestamp(now: Date = new Date()): string {
  return String(Math.floor(now.getTime() / 1000));
}

/** The three authentication headers for a request. */
export function signedHeaders(credentials: { apiKey: string; apiSecret: string }, request: Omit<SignedParts, "timestamp">, now?: Date): Record<string, string> {
  const timestamp = unixTimestamp(now);
  return {
    "X-API-Key": credentials.apiKey,
    "X-Timestamp": timestamp,
    "X-Signature": sign(credentials.apiSecret, { ...request, timestamp }),
  };
}
