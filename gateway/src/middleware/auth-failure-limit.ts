import type { Clock } from "@payments/kit";
import { ApiError, rateLimited } from "../errors.js";
import { memoryLimiter, type RateLimiter } from "../rate-limit-store.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * A budget of failed authentications per client IP, checked before authenticate: once an
 * IP has spent it, its further requests are 429 before their API key is even looked up,
 * so a flood of made-up keys cannot load the credential lookup that every merchant's
 * requests share. Only failures spend (a 401 with no merchant authenticated yet), so a
 * merchant that signs correctly is never charged. A rate of 0 turns it off. With a shared
 * limiter the budget is one for all gateway replicas.
 */
export function authFailureLimit(options: { clock: Clock; perSecond: number; burst: number; maxKeys?: number; limiter?: RateLimiter }): GatewayMiddleware {
  if (options.perSecond <= 0) return (_ctx, next) => next();
  const buckets = options.limiter ?? memoryLimiter({ clock: options.clock, ...(options.maxKeys !== undefined ? { maxKeys: options.maxKeys } : {}) });
  const limit = { perSecond: options.perSecond, burst: options.burst };
  return async (ctx, next) => {
    const ip = ctx.state.clientIp;
    if (ip === undefined) throw new Error("auth-failure-limit must run after client-ip");
    const wait = await buckets.waitMs(ip, limit);
    if (wait > 0) throw rateLimited(wait);
    try {
      await next();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && !ctx.state.merchant) await buckets.take(ip, limit);
      throw err;
    }
  };
}
