import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { expiryAfterRotation, GRACE_PERIOD_MAX_SECONDS, merchantIdInput } from "../merchant.js";
import { changeMerchant, insertSecret, newApiSecret, validSecretsOf, type SecretRow } from "../store.js";

const rotateSecretInput = z.object({
  merchantId: merchantIdInput,
  gracePeriodSeconds: z.number().int().max(GRACE_PERIOD_MAX_SECONDS, `must be at most ${GRACE_PERIOD_MAX_SECONDS} (30 days)`).optional(),
});

export function rotateSecret(ctx: MerchantContext): Rpc<typeof MerchantService, "rotateSecret"> {
  return {
    async rotateSecret(req) {
      const { merchantId, gracePeriodSeconds } = parseRequest(rotateSecretInput, req);
      const graceMs = gracePeriodSeconds === undefined ? ctx.config.SECRET_GRACE_PERIOD : gracePeriodSeconds * 1000;
      const apiSecret = newApiSecret();
      const merchant = await changeMerchant(ctx, merchantId, "secret_rotated", {}, async (trx, merchant, now) => {
        // The merchant row is locked by now, so the generation below cannot be taken twice.
        const older = await validSecretsOf(trx, merchant.id, now);
        for (const secret of older) {
          const expiresAt = expiryAfterRotation(secret.expiresAt, now, graceMs);
          if (expiresAt !== secret.expiresAt) await trx<SecretRow>("merchant_secrets").where({ id: secret.id }).update({ expires_at: expiresAt });
        }
        const latest = await trx<SecretRow>("merchant_secrets").where({ merchant_id: merchant.id }).max({ generation: "generation" }).first();
        await insertSecret(trx, ctx.secretBox, merchant.id, Number(latest?.generation ?? 0) + 1, apiSecret, now);
      });
      return { merchant, apiSecret };
    },
  };
}
