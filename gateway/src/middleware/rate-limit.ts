import type { Clock } from "@payments/kit";
import { rateLimited } from "../errors.js";
import { memoryLimiter, type RateLimiter } from "../rate-limit-store.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * Check 8: a token bucket per merchant, its own rate and burst or the defaults; a rate of 0
 * turns it off. A merchant may spend `burst` requests at once and `rate` a second after
 * that: in any t seconds at most `burst + rate · t` pass. Per gateway replica with the
 * in-memory limiter (the default); across all replicas with a shared one (RATE_LIMIT_STORE).
 */
export function rateLimit(options: { clock: Clock; perSecond: number; burst: number; maxKeys?: number; limiter?: RateLimiter }): GatewayMiddleware {
  const buckets = options.limiter ?? memoryLimiter({ clock: options.clock, ...(options.maxKeys !== undefined ? { maxKeys: options.maxKeys } : {}) });
  return async (ctx, next) => {
    const merchant = ctx.state.merchant;
    if (!merchant) throw new Error("rate-limit must run after authenticate");
    const perSecond = merchant.rateLimitPerSecond ?? options.perSecond;
    if (perSecond > 0) {
      // A burst below the rate would refuse a client that sends its second's worth at once.
      const burst = Math.max(merchant.rateLimitBurst ?? options.burst, perSecond);
      const taken = await buckets.take(merchant.merchantId, { perSecond, burst });
      if (!taken.allowed) throw rateLimited(taken.retryAfterMs);
    }
    await next();
  };
}
