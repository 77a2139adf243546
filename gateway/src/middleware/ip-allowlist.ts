import { ApiError } from "../errors.js";
import { callerIp, ipAllowed, type TrustFunction } from "../ip-rule.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * Check 7: the caller's IP (X-Forwarded-For only through trusted proxies) against the
 * merchant's list. Routes that move money out set requireAllowList, which refuses
 * merchants with an empty list too.
 */
export function ipAllowlist(options: { trustedProxies: TrustFunction; requireAllowList: boolean }): GatewayMiddleware {
  return async (ctx, next) => {
    const merchant = ctx.state.merchant;
    if (!merchant) throw new Error("ip-allowlist must run after authenticate");
    const ip = ctx.state.clientIp ?? callerIp(ctx.req, options.trustedProxies);
    ctx.state.clientIp = ip;
    if (!ipAllowed(ip, merchant.allowList, options.requireAllowList)) {
      const message =
        merchant.allowList.length === 0
          ? "This endpoint is only available from a whitelisted IP address, and none is configured for this account"
          : "The caller's IP address is not whitelisted for this account";
      throw new ApiError(403, "IP_NOT_WHITELISTED", message);
    }
    await next();
  };
}
