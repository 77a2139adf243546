import { MerchantService } from "@payments/contracts/merchant";
import { findMerchantUserById, type MerchantUser } from "../identity/merchant-users.js";
import { deleteSession, MERCHANT_SESSIONS, resumeSession } from "../identity/sessions.js";
import { clearCookie, merchantSessionCookieName, readCookie } from "../cookies.js";
import { nowMs, type ConsoleContext } from "../context.js";
import type { ConsoleMiddleware } from "../state.js";

/**
 * Who is signed in to the merchant dashboard, from the merchant session cookie: the live
 * `merchant_sessions` row and its enabled merchant user, or nobody (an ended session's cookie is
 * cleared). It never reads the operators' cookie or table, so an operator is nobody here. The
 * role is read from the row on every request, so a changed role or a removed user counts at once.
 */
export function merchantSession(deps: ConsoleContext): ConsoleMiddleware {
  const cookie = merchantSessionCookieName(deps.secureCookies);
  return async (ctx, next) => {
    const secret = readCookie(ctx, cookie);
    if (secret) {
      const session = await resumeSession(deps.db, secret, "browser", nowMs(deps), deps.limits, MERCHANT_SESSIONS);
      const user = session ? await findMerchantUserById(deps.db, session.operatorId) : undefined;
      if (session && user && !user.disabled) {
        ctx.state.merchantSession = session;
        ctx.state.merchantUser = user;
      } else {
        if (session) await deleteSession(deps.db, session.idHash, MERCHANT_SESSIONS);
        clearCookie(ctx, cookie, deps.secureCookies);
      }
    }
    await next();
  };
}

/** How long a merchant's name is kept before it is asked again. */
const NAME_TTL_MS = 5 * 60_000;

/**
 * The merchant's name for the header, asked of the merchant service as the user (scoped to
 * their merchant) and kept for a few minutes; the merchant id when the service does not answer
 * or refuses (the page itself then shows what the service says).
 */
export function merchantNames(deps: ConsoleContext): (user: MerchantUser) => Promise<MerchantHeader> {
  const cache = new Map<string, MerchantHeader & { until: number }>();
  return async (user) => {
    const now = nowMs(deps);
    const hit = cache.get(user.merchantId);
    if (hit && hit.until > now) return hit;
    let header: MerchantHeader = { name: user.merchantId, sandbox: undefined };
    try {
      const client = deps.services.client(MerchantService, deps.assertions.assertionsForMerchantUser(user));
      const merchant = (await client.getMerchant({ merchantId: user.merchantId })).merchant;
      if (merchant) header = { name: merchant.name || user.merchantId, sandbox: merchant.sandbox };
      cache.set(user.merchantId, { ...header, until: now + NAME_TTL_MS });
    } catch (err) {
      deps.logger.debug({ err, merchant: user.merchantId }, "merchant name not available");
    }
    if (cache.size > 10_000) cache.clear();
    return header;
  };
}

/** What the dashboard's header needs of the merchant: its name, and its kind (undefined when the service did not say). */
export interface MerchantHeader {
  name: string;
  sandbox: boolean | undefined;
}
