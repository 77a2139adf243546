import { findOperatorById } from "../identity/operators.js";
import { deleteSession, resumeSession } from "../identity/sessions.js";
import { clearCookie, readCookie, sessionCookieName } from "../cookies.js";
import { nowMs, type ConsoleContext } from "../context.js";
import type { ConsoleMiddleware } from "../state.js";

/**
 * Who is signed in, from the session cookie, for every page: the live session and its enabled
 * account, or nobody (an ended session's cookie is cleared). The role is read from the account
 * on every request, so a changed role or a disabled account counts at once.
 */
export function browserSession(deps: ConsoleContext): ConsoleMiddleware {
  const cookie = sessionCookieName(deps.secureCookies);
  return async (ctx, next) => {
    const secret = readCookie(ctx, cookie);
    if (secret) {
      const session = await resumeSession(deps.db, secret, "browser", nowMs(deps), deps.limits);
      const operator = session ? await findOperatorById(deps.db, session.operatorId) : undefined;
      if (session && operator && !operator.disabled) {
        ctx.state.session = session;
        ctx.state.operator = operator;
      } else {
        if (session) await deleteSession(deps.db, session.idHash);
        clearCookie(ctx, cookie, deps.secureCookies);
      }
    }
    await next();
  };
}
