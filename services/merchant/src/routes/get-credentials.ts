import { Code } from "@connectrpc/connect";
import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { findCredentialKey } from "../api-keys.js";
import type { MerchantContext } from "../context.js";
import { statusToProto, timestampFromMs } from "../merchant-message.js";
import { openSecret, validSecretsOf } from "../store.js";

const getCredentialsInput = z.object({ apiKey: z.string().min(1, "is required") });

/** Longer than any key we issue: not worth a query. */
const API_KEY_MAX_LENGTH = 64;

/**
 * What the gateway needs to admit requests signed with one key: its merchant, the key's own
 * secrets that verify now (never another key's), and what the key may do (its scopes, its
 * trusted mark), which the gateway signs into its voice for the merchant. A revoked key is
 * unknown: the gateway answers INVALID_API_KEY.
 */
export function getCredentials(ctx: MerchantContext): Rpc<typeof MerchantService, "getCredentials"> {
  return {
    async getCredentials(req) {
      const { apiKey } = parseRequest(getCredentialsInput, req);
      const found = apiKey.length <= API_KEY_MAX_LENGTH ? await findCredentialKey(ctx.db, apiKey) : undefined;
      if (!found || found.revoked) throw serviceError(Code.NotFound, "API_KEY_NOT_FOUND", "no merchant has this API key");
      const { merchant } = found;
      // A disabled merchant's requests are refused, so its secrets are not handed out at all.
      const secrets = merchant.status === "active" ? await validSecretsOf(ctx.db, merchant.id, apiKey, ctx.clock.now().getTime()) : [];
      return {
        merchantId: merchant.id,
        status: statusToProto(merchant.status),
        sandbox: merchant.sandbox,
        allowedIps: merchant.allowedIps,
        rateLimitPerSecond: merchant.rateLimit.perSecond ?? undefined,
        rateLimitBurst: merchant.rateLimit.burst ?? undefined,
        secrets: secrets.map((secret) => ({ secret: openSecret(ctx, secret), expiresAt: secret.expiresAt === null ? undefined : timestampFromMs(secret.expiresAt) })),
        scopes: found.scopes,
        trusted: found.trusted,
      };
    },
  };
}
