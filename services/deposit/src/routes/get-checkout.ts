import type { DepositService } from "@payments/contracts/deposit";
import type { Rpc } from "@payments/kit";
import type { DepositContext } from "../context.js";
import { checkoutMerchantName, depositForToken } from "../checkout.js";
import { depositFromRow } from "../store.js";

export function getCheckout(ctx: DepositContext): Rpc<typeof DepositService, "getCheckout"> {
  return {
    async getCheckout(req) {
      const row = await depositForToken(ctx, req.token);
      return { deposit: depositFromRow(row), sandbox: Boolean(row.sandbox), merchantDisplayName: await checkoutMerchantName(ctx, row) };
    },
  };
}
