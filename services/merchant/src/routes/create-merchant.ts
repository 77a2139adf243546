import type { MerchantService } from "@payments/contracts/merchant";
import { actingName, API_KEY_SCOPES } from "@payments/access";
import { isUniqueViolation, newId, parseRequest, type Rpc } from "@payments/kit";
import { insertApiKey } from "../api-keys.js";
import { z } from "zod";
import { requireCallableCallbackUrl } from "../callback-url-policy.js";
import type { MerchantContext } from "../context.js";
import { allowedIpsInput, callbackUrlInput, DEFAULT_PAYMENT_RULES, displayNameInput, merchantNameInput } from "../merchant.js";
import { toMerchantMessage } from "../merchant-message.js";
import {
  insertMerchant,
  insertSecret,
  newApiKey,
  newApiSecret,
  recordMerchantChanged,
  secretsOf,
  type MerchantRecord,
} from "../store.js";
import { insertWebhookSecret, newWebhookSecret } from "../webhook-secrets.js";

const createMerchantInput = z.object({
  name: merchantNameInput,
  allowedIps: allowedIpsInput,
  callbackUrl: callbackUrlInput,
  sandbox: z.boolean(),
  displayName: displayNameInput,
});

const ATTEMPTS = 3;

/** The request checked, as the handler takes it: also what four-eyes checks before it stores a live merchant's creation (access.ts). */
export function parseCreateMerchant(req: unknown): z.infer<typeof createMerchantInput> {
  return parseRequest(createMerchantInput, req);
}

export function createMerchant(ctx: MerchantContext): Rpc<typeof MerchantService, "createMerchant"> {
  return {
    async createMerchant(req) {
      const input = parseCreateMerchant(req);
      await requireCallableCallbackUrl(ctx, input.callbackUrl);
      const apiSecret = newApiSecret();
      const webhookSecret = newWebhookSecret();
      for (let attempt = 1; ; attempt++) {
        const now = ctx.clock.now().getTime();
        const merchant: MerchantRecord = {
          id: newId("mer"),
          name: input.name,
          status: "active",
          sandbox: input.sandbox,
          apiKey: newApiKey(),
          allowedIps: input.allowedIps,
          callbackUrl: input.callbackUrl,
          rateLimit: { perSecond: null, burst: null },
          paymentRules: { ...DEFAULT_PAYMENT_RULES },
          displayName: input.displayName,
          withdrawalApprovalThreshold: null,
          createdAt: now,
          updatedAt: now,
        };
        try {
          const secrets = await ctx.db.transaction(async (trx) => {
            await insertMerchant(trx, merchant);
            // The primary key: every scope, as every merchant's one key had before keys had scopes; it is never revoked and signs callbacks.
            await insertApiKey(trx, {
              apiKey: merchant.apiKey,
              merchantId: merchant.id,
              label: null,
              scopes: [...API_KEY_SCOPES],
              trusted: false,
              createdAt: now,
              createdBy: actingName(""),
              revokedAt: null,
              revokedBy: null,
            });
            await insertSecret(trx, ctx.secretBox, { merchantId: merchant.id, apiKey: merchant.apiKey }, 1, apiSecret, now);
            await insertWebhookSecret(trx, ctx.secretBox, merchant.id, 1, webhookSecret, now);
            await recordMerchantChanged(trx, ctx.clock, merchant, "created", now);
            return (await secretsOf(trx, [merchant.id])).get(merchant.id) ?? [];
          });
          ctx.outbox.nudge();
          return { merchant: toMerchantMessage(merchant, secrets, now), apiSecret, webhookSecret };
        } catch (err) {
          // Ids and keys are 128+ random bits, so a clash is next to impossible; if one happens, draw again.
          if (isUniqueViolation(err) && attempt < ATTEMPTS) continue;
          throw err;
        }
      }
    },
  };
}
