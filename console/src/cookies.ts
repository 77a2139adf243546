import type { ConsoleContextKoa } from "./state.js";

export interface CookieOptions {
  secure: boolean;
  /** Seconds; a session cookie (gone with the browser) without it. */
  maxAgeSeconds?: number;
  httpOnly?: boolean;
}

/**
 * The session cookie's name: with Secure, the `__Host-` prefix, which browsers accept only from
 * https with Path=/ and no Domain, so no sibling subdomain can plant or shadow it.
 */
export function sessionCookieName(secure: boolean): string {
  return secure ? "__Host-console_session" : "console_session";
}

/** The merchant dashboard's session cookie: another name, so an operator's cookie is never read as a merchant user's, nor the other way. */
export function merchantSessionCookieName(secure: boolean): string {
  return secure ? "__Host-console_merchant_session" : "console_merchant_session";
}

export function preSessionCookieName(secure: boolean): string {
  return secure ? "__Host-console_csrf" : "console_csrf";
}

export const LANGUAGE_COOKIE = "console_lang";

/** One cookie of the request, or undefined; written by hand so the attributes are exactly ours. */
export function readCookie(ctx: ConsoleContextKoa, name: string): string | undefined {
  const header = ctx.get("cookie");
  for (const part of header.split(";")) {
    const index = part.indexOf("=");
    if (index < 0) continue;
    if (part.slice(0, index).trim() !== name) continue;
    const value = part.slice(index + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Every cookie is HttpOnly (unless asked otherwise), SameSite=Strict and Path=/; Secure as the deployment says. */
export function setCookie(ctx: ConsoleContextKoa, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, "Path=/", "SameSite=Strict"];
  if (options.httpOnly !== false) parts.push("HttpOnly");
  if (options.secure) parts.push("Secure");
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  ctx.append("Set-Cookie", parts.join("; "));
}

export function clearCookie(ctx: ConsoleContextKoa, name: string, secure: boolean): void {
  setCookie(ctx, name, "", { secure, maxAgeSeconds: 0 });
}
