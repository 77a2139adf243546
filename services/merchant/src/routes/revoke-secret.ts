import { Code } from "@connectrpc/connect";
import type { MerchantService } from "@payments/contracts/merchant";
import { identifier, parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput, secretValidAt } from "../merchant.js";
import { toMerchantMessage } from "../merchant-message.js";
import { changeMerchant, findMerchantWithSecrets, merchantNotFound, validSecretsOf, type SecretRow } from "../store.js";

const revokeSecretInput = z.object({ merchantId: merchantIdInput, secretId: identifier(100) });

function secretNotFound(secretId: string) {
  return serviceError(Code.NotFound, "SECRET_NOT_FOUND", `the merchant has no API secret ${JSON.stringify(secretId)}`);
}

/**
 * Ends one API secret now: its expiry becomes this moment, so it stops verifying at once
 * (SecretInfo.valid false). The end, the merchant row and the MerchantChanged event
 * (`secret_revoked`, which drops the gateway's cached credentials) are one transaction, as
 * RotateSecret's are.
 *
 * The merchant's current secret (the one without an end) cannot be revoked: the merchant
 * would be left with none, or only with rotated-out ones that end on their own, and its API
 * calls would stop. LAST_SECRET says to rotate first and revoke the old one then. A secret
 * that has already ended stays ended (an end never moves back), so revoking it again is
 * answered with the merchant as it is and nothing written.
 */
export function revokeSecret(ctx: MerchantContext): Rpc<typeof MerchantService, "revokeSecret"> {
  return {
    async revokeSecret(req) {
      const { merchantId, secretId } = parseRequest(revokeSecretInput, req);
      const found = await findMerchantWithSecrets(ctx.db, merchantId);
      if (!found) throw merchantNotFound(merchantId);
      const secret = found.secrets.find((s) => s.id === secretId);
      if (!secret) throw secretNotFound(secretId);
      const now = ctx.clock.now().getTime();
      if (!secretValidAt(secret, now)) return { merchant: toMerchantMessage(found.merchant, found.secrets, now) };
      const merchant = await changeMerchant(ctx, merchantId, "secret_revoked", {}, async (trx, locked, at) => {
        // The merchant row is locked by now: a rotation or another revoke waits for this one.
        const valid = await validSecretsOf(trx, locked.id, at);
        const target = valid.find((s) => s.id === secretId);
        if (!target) return; // ended meanwhile
        if (!valid.some((s) => s.id !== secretId && s.expiresAt === null)) {
          throw serviceError(
            Code.FailedPrecondition,
            "LAST_SECRET",
            "this is the merchant's current API secret: revoking it would leave the merchant without one; rotate the secret first, then revoke the old one",
          );
        }
        await trx<SecretRow>("merchant_secrets").where({ id: secretId, merchant_id: locked.id }).update({ expires_at: at });
      });
      ctx.logger.info({ merchantId, secretId }, "API secret revoked");
      return { merchant };
    },
  };
}
