import { Code } from "@connectrpc/connect";
import type { MerchantService } from "@payments/contracts/merchant";
import { actingName } from "@payments/access";
import { parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { apiKeyInput } from "../api-key-rules.js";
import { apiKeyView, requireApiKey, requireMayHold, type ApiKeyRow } from "../api-keys.js";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { changeMerchantWith, type SecretRow } from "../store.js";

const revokeApiKeyInput = z.object({ merchantId: merchantIdInput, apiKey: apiKeyInput.min(1, "is required") });

/**
 * Ends one key now: the key is marked revoked (when and by whom) and every secret of it that
 * still verifies ends this moment, in one transaction with the `api_key_revoked` event that
 * drops the gateway's cached credentials, so the next request signed with it is
 * INVALID_API_KEY. The primary key is refused (PRIMARY_KEY): its current secret signs the
 * merchant's callbacks (decisions.md), so a leaked one is rotated instead. Revoking a revoked
 * key answers it as it is and writes nothing. A merchant's developer revokes only keys that
 * cannot withdraw.
 */
export function revokeApiKey(ctx: MerchantContext): Rpc<typeof MerchantService, "revokeApiKey"> {
  return {
    async revokeApiKey(req) {
      const { merchantId, apiKey } = parseRequest(revokeApiKeyInput, req);
      const { merchant, key } = await requireApiKey(ctx.db, merchantId, apiKey);
      requireMayHold(key, "revoke");
      if (key.apiKey === merchant.apiKey) {
        throw serviceError(
          Code.FailedPrecondition,
          "PRIMARY_KEY",
          "this is the merchant's primary API key: its secret signs the merchant's callbacks, so it cannot be revoked; rotate its secret instead",
        );
      }
      const now = ctx.clock.now().getTime();
      if (key.revokedAt !== null) return { key: await apiKeyView(ctx.db, merchant, key.apiKey, now) };
      const by = actingName("");
      const { result } = await changeMerchantWith(
        ctx,
        merchantId,
        "api_key_revoked",
        {},
        async (trx, locked, at) => {
          // Only a key still live is ended: a revoke that raced this one leaves the first end in place.
          const ended = await trx<ApiKeyRow>("merchant_api_keys").where({ api_key: key.apiKey, merchant_id: locked.id }).whereNull("revoked_at").update({ revoked_at: at, revoked_by: by });
          if (ended > 0) {
            await trx<SecretRow>("merchant_secrets")
              .where({ merchant_id: locked.id, api_key: key.apiKey })
              .andWhere((q) => {
                q.whereNull("expires_at").orWhere("expires_at", ">", at);
              })
              .update({ expires_at: at });
          }
          return apiKeyView(trx, locked, key.apiKey, at);
        },
        { apiKey: key.apiKey },
      );
      ctx.logger.info({ merchantId, apiKey: key.apiKey }, "API key revoked");
      return { key: result };
    },
  };
}
