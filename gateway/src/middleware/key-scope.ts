import type { ApiKeyScope } from "@payments/access";
import { ApiError } from "../errors.js";
import { scopeMask, scopeWords } from "../key-scopes.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * After the IP rule: the key the request was signed with must have one of the scopes the
 * route declares, else 403 INSUFFICIENT_SCOPE naming them, before any service is called. The
 * services check the same scopes again from the gateway's signed voice (their access tables'
 * `apiKey.scopes`), so a request that got past here by a bug is still refused there.
 */
export function keyScope(scopes: readonly ApiKeyScope[]): GatewayMiddleware {
  const needed = scopeMask(scopes);
  const wanted = scopeWords(scopes, "or");
  return async (ctx, next) => {
    const merchant = ctx.state.merchant;
    if (!merchant) throw new Error("key-scope must run after authenticate");
    if ((merchant.scopeMask & needed) === 0) {
      const held = merchant.scopes.length > 0 ? `this key has ${scopeWords(merchant.scopes, "and")}` : "this key has none";
      throw new ApiError(403, "INSUFFICIENT_SCOPE", `This endpoint needs an API key with the ${wanted} scope; ${held}`);
    }
    await next();
  };
}
