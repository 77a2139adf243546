import type { Clock } from "@payments/kit";
import { rateLimited } from "../errors.js";
import { memoryLimiter, type RateLimiter } from "../rate-limit-store.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * Every request spends a token of its client IP's bucket, for public routes that have no
 * merchant to charge (the checkout). A rate of 0 turns it off. `headers` go on the 429 too,
 * so a throttled answer keeps the route's security headers. With a shared limiter the
 * budget is one for all gateway replicas.
 */
export function ipRateLimit(options: {
  clock: Clock;
  perSecond: number;
  burst: number;
  maxKeys?: number;
  headers?: Record<string, string>;
  limiter?: RateLimiter;
}): GatewayMiddleware {
  if (options.perSecond <= 0) return (_ctx, next) => next();
  const buckets = options.limiter ?? memoryLimiter({ clock: options.clock, ...(options.maxKeys !== undefined ? { maxKeys: options.maxKeys } : {}) });
  const limit = { perSecond: options.perSecond, burst: options.burst };
  return async (ctx, next) => {
    const ip = ctx.state.clientIp;
    if (ip === undefined) throw new Error("ip-rate-limit must run after client-ip");
    const taken = await buckets.take(ip, limit);
    if (!taken.allowed) {
      if (options.headers) ctx.set(options.headers);
      throw rateLimited(taken.retryAfterMs);
    }
    await next();
  };
}
