import { Code } from "@connectrpc/connect";
import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { apiKeyInput, canWithdraw } from "../api-key-rules.js";
import { apiKeyRevoked, apiKeyView, requireApiKey, type ApiKeyRow } from "../api-keys.js";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { changeMerchantWith } from "../store.js";

const setApiKeyTrustedInput = z.object({ merchantId: merchantIdInput, apiKey: apiKeyInput.min(1, "is required"), trusted: z.boolean() });

/** The request checked, as the handler takes it: also what the audit reads the key's state before the change by (access.ts). */
export function parseSetApiKeyTrusted(req: unknown): z.infer<typeof setApiKeyTrustedInput> {
  return parseRequest(setApiKeyTrustedInput, req);
}

/**
 * Marks a key trusted for automatic payouts, or takes the mark away. The payout service reads
 * the mark from the gateway's signed voice for the merchant: a trusted key's withdrawals skip
 * the merchant's approval threshold, so only the merchant's owner (or an admin) sets it (the
 * access table), and the access layer audits every call with the key as it was before. Only a
 * key that can withdraw may carry it (KEY_CANNOT_WITHDRAW), and not a revoked one. The event
 * drops the gateway's cached credentials, so the next request carries the new mark.
 */
export function setApiKeyTrusted(ctx: MerchantContext): Rpc<typeof MerchantService, "setApiKeyTrusted"> {
  return {
    async setApiKeyTrusted(req) {
      const { merchantId, apiKey, trusted } = parseSetApiKeyTrusted(req);
      const { key } = await requireApiKey(ctx.db, merchantId, apiKey);
      if (key.revokedAt !== null) throw apiKeyRevoked(key.apiKey);
      if (trusted && !canWithdraw(key.scopes)) {
        throw serviceError(Code.FailedPrecondition, "KEY_CANNOT_WITHDRAW", "only a key with the withdrawals scope can be trusted for automatic payouts");
      }
      const { result } = await changeMerchantWith(
        ctx,
        merchantId,
        "api_key_trusted",
        {},
        async (trx, locked, now) => {
          const changed = await trx<ApiKeyRow>("merchant_api_keys").where({ api_key: key.apiKey, merchant_id: locked.id }).whereNull("revoked_at").update({ trusted });
          if (changed === 0) throw apiKeyRevoked(key.apiKey);
          return apiKeyView(trx, locked, key.apiKey, now);
        },
        { apiKey: key.apiKey },
      );
      ctx.logger.info({ merchantId, apiKey: key.apiKey, trusted }, trusted ? "API key trusted for automatic payouts" : "API key no longer trusted for automatic payouts");
      return { key: result };
    },
  };
}
