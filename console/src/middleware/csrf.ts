import { newToken } from "@payments/kit";
import { sameSecret } from "../identity/secret-token.js";
import { preSessionCookieName, readCookie, setCookie } from "../cookies.js";
import { ConsoleError } from "../errors.js";
import type { ConsoleContextKoa, ConsoleMiddleware } from "../state.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The token a request carries: the form's hidden `_csrf` field, or the `x-csrf-token` header. */
function presented(ctx: ConsoleContextKoa): string | undefined {
  return ctx.state.form?._csrf ?? (ctx.get("x-csrf-token") || undefined);
}

function refuse(): never {
  throw new ConsoleError(403, "CSRF", "missing or wrong CSRF token");
}

/**
 * A signed-in page's state-changing request (POST, PUT, PATCH, DELETE) must carry the session's
 * CSRF token: another site can make the browser send the cookie, but cannot read the token.
 * Refused with 403 before the handler runs, so nothing changes.
 */
export function sessionCsrf(options: { merchant?: boolean } = {}): ConsoleMiddleware {
  return async (ctx, next) => {
    if (!SAFE_METHODS.has(ctx.method)) {
      // A merchant page takes only its merchant session's token; an operator page only the operator's.
      const expected = options.merchant ? ctx.state.merchantSession?.csrfToken : ctx.state.session?.csrfToken;
      const given = presented(ctx);
      if (!expected || !given || !sameSecret(given, expected)) refuse();
    }
    await next();
  };
}

/**
 * The token of a page shown before there is a session (sign-in, set-password): a random value in
 * a SameSite=Strict, HttpOnly cookie, set when the form is shown, and repeated in the form. A
 * submission is accepted only when the two match (double submit): a cross-site form has neither.
 */
export function preSessionToken(ctx: ConsoleContextKoa, secure: boolean): string {
  const name = preSessionCookieName(secure);
  const existing = readCookie(ctx, name);
  if (existing && /^[A-Za-z0-9_-]{32,}$/.test(existing)) return existing;
  const token = newToken(24);
  setCookie(ctx, name, token, { secure });
  return token;
}

export function preSessionCsrf(options: { secure: boolean }): ConsoleMiddleware {
  const name = preSessionCookieName(options.secure);
  return async (ctx, next) => {
    if (!SAFE_METHODS.has(ctx.method)) {
      const expected = readCookie(ctx, name);
      const given = presented(ctx);
      if (!expected || !given || !sameSecret(given, expected)) refuse();
    }
    await next();
  };
}
