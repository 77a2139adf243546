import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { ApiError } from "../errors.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * Check 8: a request budget per merchant, its own rate and burst or the defaults; a rate of
 * 0 turns it off. Each merchant may spend `burst` requests at once and, over time, `rate`
 * per second: a window of `burst` requests every `burst / rate` seconds.
 */
export function rateLimit(options: { perSecond: number; burst: number }): GatewayMiddleware {
  const limiters = new Map<string, RateLimiterMemory>();
  const limiterFor = (perSecond: number, burst: number): RateLimiterMemory => {
    const key = `${perSecond}/${burst}`;
    let limiter = limiters.get(key);
    if (!limiter) {
      limiter = new RateLimiterMemory({ keyPrefix: `rl${key}`, points: burst, duration: burst / perSecond });
      limiters.set(key, limiter);
    }
    return limiter;
  };

  return async (ctx, next) => {
    const merchant = ctx.state.merchant;
    if (!merchant) throw new Error("rate-limit must run after authenticate");
    const perSecond = merchant.rateLimitPerSecond ?? options.perSecond;
    if (perSecond > 0) {
      // A burst below the rate would cap the rate itself.
      const burst = Math.max(merchant.rateLimitBurst ?? options.burst, perSecond);
      try {
        await limiterFor(perSecond, burst).consume(merchant.merchantId);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new ApiError(429, "RATE_LIMITED", `Too many requests; retry after ${seconds} s`, undefined, { "Retry-After": String(seconds) });
      }
    }
    await next();
  };
}
