import { hasUnsafeCharacters, validationError } from "@payments/kit";
import { z } from "zod";

/**
 * A deposit's return URL: where the checkout page sends the customer back to the merchant.
 * The customer's browser follows it, so what matters is what it can do there: only web
 * pages (https, or http for a sandbox merchant developing on its own machine) — never
 * `javascript:` or `data:`, which would run in the checkout page's origin, and never
 * credentials, which would hand a password to whoever reads the page or the link.
 */

export const RETURN_URL_MAX_LENGTH = 2000;

/** A return URL that passed the rule; `secure` false is http, allowed only for sandbox merchants. */
export interface ReturnUrl {
  /** The WHATWG-normalised form (`https://Shop.Example` → `https://shop.example/`): what a browser would open. */
  href: string;
  secure: boolean;
}

export type CheckedReturnUrl = { ok: true; value: ReturnUrl | null } | { ok: false; message: string };

const SCHEME_PROBLEM = "must be an absolute https URL (http only for sandbox merchants)";

/**
 * The rule for every merchant: trimmed, empty for none; at most 2,000 characters as given and
 * once normalised; no control or bidirectional characters (the URL parser would drop tabs
 * and line breaks silently, so the URL stored would not be the one read); `https://` or
 * `http://` written out (so `javascript:`, `data:`, other schemes, relative and
 * protocol-relative URLs are all refused); parseable with a host; no `user:password@`.
 * Whether http is allowed depends on the merchant: see requireSecureUnlessSandbox.
 */
export function checkReturnUrl(raw: string): CheckedReturnUrl {
  const text = raw.trim();
  if (text === "") return { ok: true, value: null };
  if (text.length > RETURN_URL_MAX_LENGTH) return { ok: false, message: `must be at most ${RETURN_URL_MAX_LENGTH} characters` };
  if (hasUnsafeCharacters(text)) return { ok: false, message: "must not contain control characters or bidirectional overrides" };
  const scheme = /^(https?):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) return { ok: false, message: SCHEME_PROBLEM };
  // Before parsing: WHATWG drops an empty "user:@" silently, and the text sent is what is judged.
  if (/^https?:\/\/[^/?#\\]*@/i.test(text)) return { ok: false, message: "must not contain credentials (user:password@)" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: "is not a valid URL" };
  }
  if (url.hostname === "") return { ok: false, message: "needs a host" };
  if (url.username !== "" || url.password !== "") return { ok: false, message: "must not contain credentials (user:password@)" };
  const href = url.href;
  if (href.length > RETURN_URL_MAX_LENGTH) return { ok: false, message: `must be at most ${RETURN_URL_MAX_LENGTH} characters once normalised (${href.length})` };
  return { ok: true, value: { href, secure: scheme === "https" } };
}

/** The request field: "" for none, else a URL the rule above accepts. */
export const returnUrlInput = z.string().transform((raw, ctx) => {
  const checked = checkReturnUrl(raw);
  if (!checked.ok) {
    ctx.addIssue({ code: "custom", message: checked.message });
    return z.NEVER;
  }
  return checked.value;
});

/**
 * A live merchant's customers paid real money: they go back over https only. http is for a
 * sandbox merchant trying the flow against its own machine (http://localhost:3000/…).
 */
export function requireSecureUnlessSandbox(returnUrl: ReturnUrl | null, sandbox: boolean): void {
  if (returnUrl && !returnUrl.secure && !sandbox) {
    throw validationError("return_url", "return_url: must use https (http only for sandbox merchants)");
  }
}
