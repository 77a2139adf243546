import { speakForMerchant } from "@payments/access";
import type { Clock } from "@payments/kit";
import { verify } from "@payments/signing";
import type { CredentialCache } from "../credential-cache.js";
import { secretsValidAt } from "../credential-cache.js";
import { ApiError } from "../errors.js";
import type { GatewayMiddleware } from "../state.js";
import { timestampAcceptable } from "../timestamp-rule.js";

const EMPTY = Buffer.alloc(0);

/**
 * Checks 1 to 6 of the authentication table in decisions.md, in that order; the first
 * failure is the answer. The signature is checked over the raw bytes and the path with its
 * query exactly as requested, against the secrets valid at this moment.
 */
export function authenticate(options: { credentials: CredentialCache; clock: Clock; toleranceSeconds: number }): GatewayMiddleware {
  return async (ctx, next) => {
    const apiKey = ctx.get("X-API-Key");
    if (apiKey === "") throw new ApiError(401, "MISSING_API_KEY", "The X-API-Key header is required");

    const merchant = await options.credentials.get(apiKey);
    if (!merchant || !merchant.active) throw new ApiError(401, "INVALID_API_KEY", "The API key is invalid");

    const timestamp = ctx.get("X-Timestamp");
    if (timestamp === "") throw new ApiError(401, "MISSING_TIMESTAMP", "The X-Timestamp header is required");

    const signature = ctx.get("X-Signature");
    if (signature === "") throw new ApiError(401, "MISSING_SIGNATURE", "The X-Signature header is required");

    const now = options.clock.now();
    if (!timestampAcceptable(timestamp, now, options.toleranceSeconds)) {
      throw new ApiError(
        401,
        "TIMESTAMP_EXPIRED",
        `X-Timestamp must be the current Unix time in seconds, within ${options.toleranceSeconds} seconds of server time`,
      );
    }

    const parts = { timestamp, method: ctx.method, path: ctx.originalUrl, body: ctx.state.rawBody ?? EMPTY };
    if (!verify(secretsValidAt(merchant, now), parts, signature)) {
      throw new ApiError(401, "INVALID_SIGNATURE", "The signature does not match the request");
    }

    ctx.state.merchant = merchant;
    // Every service call this request makes speaks for this merchant, with this key's scopes and trusted mark, signed by the gateway.
    await speakForMerchant(merchant.voice, next);
  };
}
