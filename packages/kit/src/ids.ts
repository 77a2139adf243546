import { randomBytes } from "node:crypto";

/**
 * Opaque public identifier: a short type prefix and 128 random bits, URL-safe.
 * Reveals neither order nor volume.
 */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString("base64url")}`;
}

/** An unguessable URL-safe token of the given number of random bytes. */
export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
