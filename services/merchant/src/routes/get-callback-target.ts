import { Code, type ServiceImpl } from "@connectrpc/connect";
import { GetCallbackTargetRequestSchema, type MerchantService } from "@payments/contracts/merchant";
import { serviceError } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { statusToProto } from "../merchant-message.js";
import { findMerchant, merchantNotFound, validSecretsOf } from "../merchant-store.js";
import { parseRequest } from "../request.js";
import { SecretBoxError } from "../secret-box.js";

const getCallbackTargetInput = z.object({ merchantId: merchantIdInput });

export function getCallbackTarget(ctx: MerchantContext): Pick<ServiceImpl<typeof MerchantService>, "getCallbackTarget"> {
  return {
    async getCallbackTarget(req) {
      const { merchantId } = parseRequest(GetCallbackTargetRequestSchema, getCallbackTargetInput, req);
      const merchant = await findMerchant(ctx.db, merchantId);
      if (!merchant) throw merchantNotFound(merchantId);
      // Newest first: the first valid secret is the current one (it never expires while current).
      const [current] = await validSecretsOf(ctx.db, merchant.id, ctx.clock.now().getTime());
      if (!current) throw serviceError(Code.FailedPrecondition, "NO_CURRENT_SECRET", "the merchant has no current secret");
      let signingSecret: string;
      try {
        signingSecret = ctx.secretBox.open(current.sealed, merchant.id);
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        ctx.logger.error({ merchantId: merchant.id, secretId: current.id, err }, "a stored secret does not decrypt: altered, or MASTER_KEY changed");
        throw serviceError(Code.Internal, "SECRET_UNREADABLE", "a stored secret of this merchant cannot be decrypted");
      }
      return { merchantId: merchant.id, callbackUrl: merchant.callbackUrl ?? "", signingSecret, status: statusToProto(merchant.status) };
    },
  };
}
