import { randomBytes } from "node:crypto";

/**
 * Random bytes drawn from a pool refilled 4 KiB at a time: one call into the CSPRNG serves
 * about 250 ids instead of one, on paths that make an id per request. Every byte is used
 * once, and each id is copied out of the pool into its string before the pool is reused.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function random(bytes: number): Buffer {
  if (bytes > POOL_BYTES) return randomBytes(bytes);
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const out = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return out;
}

/**
 * Opaque public identifier: a short type prefix and 128 random bits, URL-safe.
 * Reveals neither order nor volume.
 */
export function newId(prefix: string): string {
  return `${prefix}_${random(16).toString("base64url")}`;
}

/** An unguessable URL-safe token of the given number of random bytes. */
export function newToken(bytes = 32): string {
  return random(bytes).toString("base64url");
}
