import { Code, type ServiceImpl } from "@connectrpc/connect";
import { GetCallbackTargetRequestSchema, type MerchantService } from "@payments/contracts/merchant";
import { serviceError } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { statusToProto } from "../merchant-message.js";
import { findMerchantWithCurrentSecret, merchantNotFound, openSecret } from "../merchant-store.js";
import { parseRequest } from "../request.js";

const getCallbackTargetInput = z.object({ merchantId: merchantIdInput });

export function getCallbackTarget(ctx: MerchantContext): Pick<ServiceImpl<typeof MerchantService>, "getCallbackTarget"> {
  return {
    async getCallbackTarget(req) {
      const { merchantId } = parseRequest(GetCallbackTargetRequestSchema, getCallbackTargetInput, req);
      // The newest valid secret is the current one (it never expires while current).
      const found = await findMerchantWithCurrentSecret(ctx.db, merchantId, ctx.clock.now().getTime());
      if (!found) throw merchantNotFound(merchantId);
      const { merchant, current } = found;
      if (!current) throw serviceError(Code.FailedPrecondition, "NO_CURRENT_SECRET", "the merchant has no current secret");
      return { merchantId: merchant.id, callbackUrl: merchant.callbackUrl ?? "", signingSecret: openSecret(ctx, current), status: statusToProto(merchant.status) };
    },
  };
}
