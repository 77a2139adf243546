import type { Clock } from "@payments/kit";
import { rateLimited } from "../errors.js";
import type { GatewayMiddleware } from "../state.js";
import { TokenBuckets } from "../token-bucket.js";

/**
 * Every request spends a token of its client IP's bucket, for public routes that have no
 * merchant to charge (the checkout). A rate of 0 turns it off. `headers` go on the 429 too,
 * so a throttled answer keeps the route's security headers.
 */
export function ipRateLimit(options: { clock: Clock; perSecond: number; burst: number; maxKeys?: number; headers?: Record<string, string> }): GatewayMiddleware {
  if (options.perSecond <= 0) return (_ctx, next) => next();
  const buckets = new TokenBuckets({ clock: options.clock, ...(options.maxKeys !== undefined ? { maxKeys: options.maxKeys } : {}) });
  const limit = { perSecond: options.perSecond, burst: options.burst };
  return async (ctx, next) => {
    const ip = ctx.state.clientIp;
    if (ip === undefined) throw new Error("ip-rate-limit must run after client-ip");
    const taken = buckets.take(ip, limit);
    if (!taken.allowed) {
      if (options.headers) ctx.set(options.headers);
      throw rateLimited(taken.retryAfterMs);
    }
    await next();
  };
}
