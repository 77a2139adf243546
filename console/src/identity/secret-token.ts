import { createHash, timingSafeEqual } from "node:crypto";
import { newToken } from "@payments/kit";

/**
 * Secrets handed to a person or a program (session ids, CLI tokens, one-time link tokens) are
 * stored only as their SHA-256: 32 random bytes need no salt or slow hash, and a copy of the
 * table lets nobody in.
 */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** A new unguessable secret (32 random bytes, base64url) and the hash to store. */
export function newSecret(): { secret: string; hash: string } {
  const secret = newToken(32);
  return { secret, hash: hashSecret(secret) };
}

/** Equal strings, compared in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
