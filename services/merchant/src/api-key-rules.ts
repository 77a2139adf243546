import { API_KEY_SCOPES, type ApiKeyScope, type MerchantRole } from "@payments/access";
import { hasUnsafeCharacters } from "@payments/kit";
import { z } from "zod";
import { fromRule, type Checked } from "./merchant.js";

/** What a merchant names a key by on its pages ("payouts server"). */
export const API_KEY_LABEL_MAX_LENGTH = 100;
/**
 * Keys a merchant may have that are not revoked: enough for every system of a merchant, few
 * enough that a page lists them and the gateway's cache is not filled by one merchant.
 */
export const MAX_ACTIVE_API_KEYS = 20;

/**
 * The merchant roles that may hold a key that can withdraw: create one, rotate or revoke its
 * secrets, revoke it. A developer integrates, but money out is the owner's and finance's.
 */
export const WITHDRAWAL_KEY_HOLDERS: readonly MerchantRole[] = ["owner", "finance"];

export function normaliseApiKeyLabel(raw: string): Checked<string> {
  const label = raw.trim();
  if (label.length < 1) return { ok: false, message: "is required" };
  if (label.length > API_KEY_LABEL_MAX_LENGTH) return { ok: false, message: `must be at most ${API_KEY_LABEL_MAX_LENGTH} characters after trimming` };
  if (hasUnsafeCharacters(label)) return { ok: false, message: "must not contain control characters or bidirectional overrides" };
  return { ok: true, value: label };
}

/**
 * A key's scopes as asked: at least one, each a known scope, each once (a repeat is dropped),
 * in the canonical order of API_KEY_SCOPES whatever order they came in.
 */
export function normaliseScopes(raw: readonly string[]): Checked<ApiKeyScope[]> {
  if (raw.length === 0) return { ok: false, message: `must name at least one of ${API_KEY_SCOPES.join(", ")}` };
  const unknown = raw.find((s) => !(API_KEY_SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) return { ok: false, message: `${JSON.stringify(unknown.slice(0, 40))} is not a scope (${API_KEY_SCOPES.join(", ")})` };
  return { ok: true, value: API_KEY_SCOPES.filter((s) => raw.includes(s)) };
}

/**
 * The scopes column as stored: a scope this version does not know (a newer version's, or
 * written by hand) is dropped, so it grants nothing here.
 */
export function readScopes(column: string): ApiKeyScope[] {
  let value: unknown;
  try {
    value = JSON.parse(column);
  } catch {
    return [];
  }
  return Array.isArray(value) ? API_KEY_SCOPES.filter((s) => value.includes(s)) : [];
}

export function canWithdraw(scopes: readonly string[]): boolean {
  return scopes.includes("withdrawals");
}

/** Whether a merchant user in `role` may hold (be shown a secret of, or manage) a key with these scopes. */
export function mayHoldKey(role: MerchantRole, scopes: readonly string[]): boolean {
  return !canWithdraw(scopes) || WITHDRAWAL_KEY_HOLDERS.includes(role);
}

export const apiKeyLabelInput = fromRule(normaliseApiKeyLabel);
export const scopesInput = z.array(z.string()).transform((raw, ctx) => {
  const checked = normaliseScopes(raw);
  if (!checked.ok) {
    ctx.addIssue({ code: "custom", message: checked.message });
    return z.NEVER;
  }
  return checked.value;
});
/** A key as named in a request: empty is "is required" (or, where the RPC says so, the primary key). */
export const apiKeyInput = z.string().max(64, "is not an API key of this merchant");
