import { Code } from "@connectrpc/connect";
import type { MerchantService } from "@payments/contracts/merchant";
import { actingName } from "@payments/access";
import { isUniqueViolation, parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { apiKeyLabelInput, MAX_ACTIVE_API_KEYS, scopesInput } from "../api-key-rules.js";
import { activeKeyCount, apiKeyView, insertApiKey, requireMayHold, rotateKeySecretIn } from "../api-keys.js";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { changeMerchantWith, newApiKey, newApiSecret } from "../store.js";

const createApiKeyInput = z.object({ merchantId: merchantIdInput, label: apiKeyLabelInput, scopes: scopesInput });

const ATTEMPTS = 3;

/** The request checked, as the handler takes it (the access table's rule reads the scopes from it). */
export function parseCreateApiKey(req: unknown): z.infer<typeof createApiKeyInput> {
  return parseRequest(createApiKeyInput, req);
}

/**
 * Another key of the merchant, with the scopes asked, and its first secret, shown once. Who
 * asks is who will hold it: a merchant's developer is refused a key that can withdraw
 * (requireMayHold, beside the access table's own rule). At most MAX_ACTIVE_API_KEYS keys that
 * are not revoked, counted with the merchant row locked so two creations cannot both pass.
 */
export function createApiKey(ctx: MerchantContext): Rpc<typeof MerchantService, "createApiKey"> {
  return {
    async createApiKey(req) {
      const { merchantId, label, scopes } = parseCreateApiKey(req);
      requireMayHold({ scopes }, "create");
      const apiSecret = newApiSecret();
      const createdBy = actingName("");
      for (let attempt = 1; ; attempt++) {
        const apiKey = newApiKey();
        try {
          const { result } = await changeMerchantWith(
            ctx,
            merchantId,
            "api_key_created",
            {},
            async (trx, merchant, now) => {
              if ((await activeKeyCount(trx, merchant.id)) >= MAX_ACTIVE_API_KEYS) {
                throw serviceError(Code.FailedPrecondition, "TOO_MANY_API_KEYS", `the merchant has ${MAX_ACTIVE_API_KEYS} API keys already; revoke one it no longer uses first`);
              }
              const key = { apiKey, merchantId: merchant.id, label, scopes, trusted: false, createdAt: now, createdBy, revokedAt: null, revokedBy: null };
              await insertApiKey(trx, key);
              await rotateKeySecretIn(trx, ctx.secretBox, key, apiSecret, now, 0);
              return apiKeyView(trx, merchant, apiKey, now);
            },
            { apiKey },
          );
          ctx.logger.info({ merchantId, apiKey, scopes }, "API key created");
          return { key: result, apiSecret };
        } catch (err) {
          // Keys are 192 random bits, so a clash is next to impossible; if one happens, draw again.
          if (isUniqueViolation(err) && attempt < ATTEMPTS) continue;
          throw err;
        }
      }
    },
  };
}
