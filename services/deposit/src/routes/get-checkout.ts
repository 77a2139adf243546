import type { DepositContext } from "../context.js";
import { checkoutMerchantName, depositForToken } from "../checkout.js";
import { depositFromRow } from "../store.js";
import type { Rpc } from "./index.js";

export function getCheckout(ctx: DepositContext): Rpc<"getCheckout"> {
  return {
    async getCheckout(req) {
      const row = await depositForToken(ctx, req.token);
      return { deposit: depositFromRow(row), sandbox: Boolean(row.sandbox), merchantDisplayName: await checkoutMerchantName(ctx, row) };
    },
  };
}
