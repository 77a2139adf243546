import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { apiKeysOf, keySecretsOf, toApiKeyMessage } from "../api-keys.js";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { findMerchant, merchantNotFound } from "../store.js";

const listApiKeysInput = z.object({ merchantId: merchantIdInput });

/**
 * The merchant's keys with what each may do and its secrets' lifetimes (never a value): the
 * primary first, then the newest first, revoked ones last. A key's id is no secret (it travels
 * in every request's X-API-Key), so every role of the merchant reads the list.
 */
export function listApiKeys(ctx: MerchantContext): Rpc<typeof MerchantService, "listApiKeys"> {
  return {
    async listApiKeys(req) {
      const { merchantId } = parseRequest(listApiKeysInput, req);
      const merchant = await findMerchant(ctx.db, merchantId);
      if (!merchant) throw merchantNotFound(merchantId);
      const [keys, secrets] = await Promise.all([apiKeysOf(ctx.db, merchantId), keySecretsOf(ctx.db, merchantId)]);
      const now = ctx.clock.now().getTime();
      const rank = (k: (typeof keys)[number]) => (k.apiKey === merchant.apiKey ? 0 : k.revokedAt === null ? 1 : 2);
      const ordered = [...keys].sort((a, b) => rank(a) - rank(b) || b.createdAt - a.createdAt || (a.apiKey < b.apiKey ? 1 : -1));
      return { keys: ordered.map((k) => toApiKeyMessage(k, secrets.get(k.apiKey) ?? [], now, merchant.apiKey)) };
    },
  };
}
