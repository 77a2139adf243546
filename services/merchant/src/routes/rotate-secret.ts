import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { apiKeyInput } from "../api-key-rules.js";
import { apiKeyRevoked, apiKeyView, requireApiKey, requireMayHold, rotateKeySecretIn } from "../api-keys.js";
import type { MerchantContext } from "../context.js";
import { GRACE_PERIOD_MAX_SECONDS, merchantIdInput } from "../merchant.js";
import { changeMerchantWith, newApiSecret } from "../store.js";

const rotateSecretInput = z.object({
  merchantId: merchantIdInput,
  gracePeriodSeconds: z.number().int().max(GRACE_PERIOD_MAX_SECONDS, `must be at most ${GRACE_PERIOD_MAX_SECONDS} (30 days)`).optional(),
  apiKey: apiKeyInput,
});

/**
 * A new current secret of one key (the primary unless the request names another), shown once.
 * A secret is what signs requests, so whoever is shown one holds the key: a merchant's
 * developer is refused a key that can withdraw (requireMayHold), before anything is written.
 */
export function rotateSecret(ctx: MerchantContext): Rpc<typeof MerchantService, "rotateSecret"> {
  return {
    async rotateSecret(req) {
      const { merchantId, gracePeriodSeconds, apiKey } = parseRequest(rotateSecretInput, req);
      const graceMs = gracePeriodSeconds === undefined ? ctx.config.SECRET_GRACE_PERIOD : gracePeriodSeconds * 1000;
      const { key } = await requireApiKey(ctx.db, merchantId, apiKey);
      requireMayHold(key, "rotate the secret of");
      const apiSecret = newApiSecret();
      const { merchant, result } = await changeMerchantWith(
        ctx,
        merchantId,
        "secret_rotated",
        {},
        async (trx, locked, now) => {
          // Revoked meanwhile? The merchant row is locked now: what is read here stays so until the commit.
          const current = await apiKeyView(trx, locked, key.apiKey, now);
          if (current.revokedAt) throw apiKeyRevoked(key.apiKey);
          await rotateKeySecretIn(trx, ctx.secretBox, key, apiSecret, now, graceMs);
          return apiKeyView(trx, locked, key.apiKey, now);
        },
        { apiKey: key.apiKey },
      );
      return { merchant, apiSecret, key: result };
    },
  };
}
