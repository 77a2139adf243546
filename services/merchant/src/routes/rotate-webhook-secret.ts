import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { GRACE_PERIOD_MAX_SECONDS, merchantIdInput, secretValidAt } from "../merchant.js";
import { timestampFromMs } from "../merchant-message.js";
import { changeMerchant } from "../store.js";
import { newWebhookSecret, rotateWebhookSecretIn, webhookSecretsInfoOf } from "../webhook-secrets.js";

const rotateWebhookSecretInput = z.object({
  merchantId: merchantIdInput,
  gracePeriodSeconds: z.number().int().max(GRACE_PERIOD_MAX_SECONDS, `must be at most ${GRACE_PERIOD_MAX_SECONDS} (30 days)`).optional(),
});

/**
 * A new current webhook secret, shown once. The rotation, the older secrets' new ends and the
 * MerchantChanged event (which drops the callback-sender's cached target, so the next attempt
 * signs with both) are one transaction. For a merchant made before webhook secrets existed
 * this issues its first, and its callbacks carry webhook-* headers from then on.
 */
export function rotateWebhookSecret(ctx: MerchantContext): Rpc<typeof MerchantService, "rotateWebhookSecret"> {
  return {
    async rotateWebhookSecret(req) {
      const { merchantId, gracePeriodSeconds } = parseRequest(rotateWebhookSecretInput, req);
      const graceMs = gracePeriodSeconds === undefined ? ctx.config.SECRET_GRACE_PERIOD : gracePeriodSeconds * 1000;
      const webhookSecret = newWebhookSecret();
      let rotatedAt = 0;
      let infos: Awaited<ReturnType<typeof webhookSecretsInfoOf>> = [];
      const merchant = await changeMerchant(ctx, merchantId, "webhook_secret_rotated", {}, async (trx, found, now) => {
        await rotateWebhookSecretIn(trx, ctx.secretBox, found.id, webhookSecret, now, graceMs);
        infos = await webhookSecretsInfoOf(trx, found.id);
        rotatedAt = now;
      });
      const webhookSecrets = infos.map((secret) => ({
        id: secret.id,
        createdAt: timestampFromMs(secret.createdAt),
        expiresAt: secret.expiresAt === null ? undefined : timestampFromMs(secret.expiresAt),
        valid: secretValidAt(secret, rotatedAt),
      }));
      return { merchant, webhookSecret, webhookSecrets };
    },
  };
}
