import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { sandboxChangeBlocker, sandboxChangeRefused } from "../merchant-activity.js";
import { changeMerchant, findMerchant, merchantNotFound } from "../store.js";

const setSandboxInput = z.object({ merchantId: merchantIdInput, sandbox: z.boolean() });

export function setSandbox(ctx: MerchantContext): Rpc<typeof MerchantService, "setSandbox"> {
  return {
    async setSandbox(req) {
      const { merchantId, sandbox } = parseRequest(setSandboxInput, req);
      const current = await findMerchant(ctx.db, merchantId);
      if (!current) throw merchantNotFound(merchantId);
      if (current.sandbox !== sandbox) {
        const blocker = await sandboxChangeBlocker(ctx.activity, merchantId);
        if (blocker) throw sandboxChangeRefused(merchantId, blocker);
      }
      const merchant = await changeMerchant(ctx, merchantId, "sandbox", { sandbox });
      return { merchant };
    },
  };
}
