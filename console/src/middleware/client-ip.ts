import proxyAddr from "proxy-addr";
import type { ConsoleMiddleware } from "../state.js";

/**
 * Settles who the caller is once, before sign-in is throttled by address: the socket peer, or
 * through a proxy listed in TRUSTED_PROXIES the nearest untrusted X-Forwarded-For hop.
 */
export function clientIp(options: { trustedProxies: readonly string[] }): ConsoleMiddleware {
  const trust = proxyAddr.compile([...options.trustedProxies]);
  return async (ctx, next) => {
    ctx.state.clientIp = proxyAddr(ctx.req, trust);
    await next();
  };
}
