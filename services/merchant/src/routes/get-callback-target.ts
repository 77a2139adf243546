import { Code } from "@connectrpc/connect";
import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { statusToProto, timestampFromMs } from "../merchant-message.js";
import { findMerchantWithCurrentSecret, merchantNotFound, openSecret } from "../store.js";
import { webhookSealContext } from "../webhook-secrets.js";

const getCallbackTargetInput = z.object({ merchantId: merchantIdInput });

export function getCallbackTarget(ctx: MerchantContext): Rpc<typeof MerchantService, "getCallbackTarget"> {
  return {
    async getCallbackTarget(req) {
      const { merchantId } = parseRequest(getCallbackTargetInput, req);
      const now = ctx.clock.now().getTime();
      // The newest valid secret is the current one (it never expires while current).
      const found = await findMerchantWithCurrentSecret(ctx.db, merchantId, now);
      if (!found) throw merchantNotFound(merchantId);
      const { merchant, current } = found;
      if (!current) throw serviceError(Code.FailedPrecondition, "NO_CURRENT_SECRET", "the merchant has no current secret");
      // The callback-sender keeps the answer until the merchant changes; the ends are sent
      // along so it stops signing with a rotated-out webhook secret on time.
      const webhookSecrets = found.webhookSecrets.map((secret) => ({
        secret: openSecret(ctx, secret, webhookSealContext(secret.merchantId)),
        expiresAt: secret.expiresAt === null ? undefined : timestampFromMs(secret.expiresAt),
      }));
      return { merchantId: merchant.id, callbackUrl: merchant.callbackUrl ?? "", signingSecret: openSecret(ctx, current), status: statusToProto(merchant.status), webhookSecrets };
    },
  };
}
