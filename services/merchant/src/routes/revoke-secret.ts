import { Code } from "@connectrpc/connect";
import type { MerchantService } from "@payments/contracts/merchant";
import { identifier, parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { apiKeyView, findApiKey, requireMayHold } from "../api-keys.js";
import type { MerchantContext } from "../context.js";
import { merchantIdInput, secretValidAt } from "../merchant.js";
import { toMerchantMessage } from "../merchant-message.js";
import { changeMerchantWith, findMerchantWithSecrets, merchantNotFound, validSecretsOf, type SecretRow } from "../store.js";

const revokeSecretInput = z.object({ merchantId: merchantIdInput, secretId: identifier(100) });

function secretNotFound(secretId: string) {
  return serviceError(Code.NotFound, "SECRET_NOT_FOUND", `the merchant has no API secret ${JSON.stringify(secretId)}`);
}

/** A secret of the merchant, any key's, with the key it belongs to. */
async function findSecret(ctx: MerchantContext, merchantId: string, secretId: string) {
  const row = await ctx.db<SecretRow>("merchant_secrets").where({ id: secretId, merchant_id: merchantId }).first("id", "api_key", "expires_at");
  return row ? { apiKey: row.api_key ?? "", expiresAt: row.expires_at === null ? null : Number(row.expires_at) } : undefined;
}

/**
 * Ends one API secret now: its expiry becomes this moment, so it stops verifying at once
 * (SecretInfo.valid false). The end, the merchant row and the MerchantChanged event
 * (`secret_revoked`, which drops the gateway's cached credentials) are one transaction, as
 * RotateSecret's are.
 *
 * A key's current secret (the one without an end) cannot be revoked: the key would be left
 * with none, or only with rotated-out ones that end on their own, and the calls signed with it
 * would stop. LAST_SECRET says to rotate first and revoke the old one then (a key no longer
 * wanted is revoked whole, RevokeApiKey). A secret that has already ended stays ended (an end
 * never moves back), so revoking it again is answered as it is and nothing written. A
 * merchant's developer manages only the secrets of keys that cannot withdraw.
 */
export function revokeSecret(ctx: MerchantContext): Rpc<typeof MerchantService, "revokeSecret"> {
  return {
    async revokeSecret(req) {
      const { merchantId, secretId } = parseRequest(revokeSecretInput, req);
      const found = await findMerchantWithSecrets(ctx.db, merchantId);
      if (!found) throw merchantNotFound(merchantId);
      const secret = await findSecret(ctx, merchantId, secretId);
      if (!secret) throw secretNotFound(secretId);
      const key = await findApiKey(ctx.db, merchantId, secret.apiKey);
      if (!key) throw secretNotFound(secretId);
      requireMayHold(key, "revoke a secret of");
      const now = ctx.clock.now().getTime();
      if (!secretValidAt(secret, now)) {
        return { merchant: toMerchantMessage(found.merchant, found.secrets, now), key: await apiKeyView(ctx.db, found.merchant, key.apiKey, now) };
      }
      const { merchant, result } = await changeMerchantWith(
        ctx,
        merchantId,
        "secret_revoked",
        {},
        async (trx, locked, at) => {
          // The merchant row is locked by now: a rotation or another revoke waits for this one.
          const valid = await validSecretsOf(trx, locked.id, key.apiKey, at);
          if (valid.some((s) => s.id === secretId)) {
            if (!valid.some((s) => s.id !== secretId && s.expiresAt === null)) {
              throw serviceError(
                Code.FailedPrecondition,
                "LAST_SECRET",
                "this is the key's current API secret: revoking it would leave the key without one; rotate the secret first, then revoke the old one",
              );
            }
            await trx<SecretRow>("merchant_secrets").where({ id: secretId, merchant_id: locked.id }).update({ expires_at: at });
          }
          return apiKeyView(trx, locked, key.apiKey, at);
        },
        { apiKey: key.apiKey },
      );
      ctx.logger.info({ merchantId, secretId, apiKey: key.apiKey }, "API secret revoked");
      return { merchant, key: result };
    },
  };
}
