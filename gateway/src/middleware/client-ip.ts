import { callerIp, type TrustFunction } from "../ip-rule.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * Settles who the caller is once, before anything is throttled or checked by address: the
 * socket peer, or through a trusted proxy the nearest untrusted X-Forwarded-For hop.
 */
export function clientIp(options: { trustedProxies: TrustFunction }): GatewayMiddleware {
  return async (ctx, next) => {
    ctx.state.clientIp = callerIp(ctx.req, options.trustedProxies);
    await next();
  };
}
