import { API_KEY_SCOPES, type ApiKeyScope } from "@payments/access";

/**
 * A set of API key scopes as bits (bit i: API_KEY_SCOPES[i]): a key's, made once when its
 * credentials are cached, and a route's, made once at start, so the check on every request is
 * one AND, with nothing allocated.
 */
export function scopeMask(scopes: readonly string[]): number {
  let mask = 0;
  for (let i = 0; i < API_KEY_SCOPES.length; i++) if (scopes.includes(API_KEY_SCOPES[i]!)) mask |= 1 << i;
  return mask;
}

/** Every scope: a route any key may call (the bank list) needs no check at all. */
export const EVERY_SCOPE = scopeMask(API_KEY_SCOPES);

/** Scope names as a merchant reads them in a message: `read or deposits`. */
export function scopeWords(scopes: readonly string[], joiner: "or" | "and"): string {
  if (scopes.length <= 1) return scopes.join("");
  return `${scopes.slice(0, -1).join(", ")} ${joiner} ${scopes.at(-1)!}`;
}

/**
 * The scopes that admit each kind of merchant route, any one of them: the routes declare these
 * and the OpenAPI document shows them (a test holds both to what the gateway answers). They
 * are what the services' access tables admit for the gateway speaking for a merchant
 * (`apiKey.scopes`), or narrower where a route merges kinds (transactions: read).
 */
export const SCOPES = {
  /** The bank list: every key (every integration starts with it). */
  anyKey: API_KEY_SCOPES,
  /** Creating and cancelling deposits, and the sandbox helpers (which move deposits). */
  deposits: ["deposits"],
  /** Reading deposits: a reporting key, or the key that made them. */
  readDeposits: ["read", "deposits"],
  /** Creating and cancelling withdrawals: money out. */
  withdrawals: ["withdrawals"],
  /** Reading withdrawals, and the balance a payouts key pays out of. */
  readWithdrawals: ["read", "withdrawals"],
  /** Both kinds at once (transactions), the statement, the callback events and their redelivery. */
  read: ["read"],
} as const satisfies Record<string, readonly ApiKeyScope[]>;
