import { Code, type ServiceImpl } from "@connectrpc/connect";
import { GetCallbackTargetRequestSchema, type MerchantService } from "@payments/contracts/merchant";
import { serviceError } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { statusToProto } from "../merchant-message.js";
import { findMerchant, merchantNotFound, openSecret, validSecretsOf } from "../merchant-store.js";
import { parseRequest } from "../request.js";

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
      return { merchantId: merchant.id, callbackUrl: merchant.callbackUrl ?? "", signingSecret: openSecret(ctx, current), status: statusToProto(merchant.status) };
    },
  };
}
