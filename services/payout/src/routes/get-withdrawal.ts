import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, validationError, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { merchantScope, processId, scopeFields, withdrawalId } from "../requests.js";
import { getWithdrawalRow, withdrawalFromRow } from "../store.js";

// The oneof is flattened first, so a refusal names withdrawal_id or process_id, not "key".
const byId = z.object({ ...scopeFields, withdrawalId });
const byProcess = z.object({ ...scopeFields, processId });

/**
 * A merchant's caller (merchant_id) sees only its own withdrawals; an operator
 * (all_merchants) any merchant's, by id. A process id is unique per merchant only, so a
 * lookup by it always names the merchant.
 */
export function getWithdrawal(ctx: PayoutContext): Rpc<typeof PayoutService, "getWithdrawal"> {
  return {
    async getWithdrawal(req) {
      if (req.key.case === undefined) throw validationError("withdrawal_id", "withdrawal_id: is required (or process_id with merchant_id)");
      if (req.key.case === "processId") {
        const input = parseRequest(byProcess, { merchantId: req.merchantId, allMerchants: req.allMerchants, processId: req.key.value });
        const merchantId = merchantScope(input);
        if (merchantId === undefined) throw validationError("all_merchants", "all_merchants: a process_id is unique per merchant only; name the merchant_id");
        return { withdrawal: withdrawalFromRow(await getWithdrawalRow(ctx.db, { processId: input.processId, merchantId })) };
      }
      const input = parseRequest(byId, { merchantId: req.merchantId, allMerchants: req.allMerchants, withdrawalId: req.key.value });
      const merchantId = merchantScope(input);
      return { withdrawal: withdrawalFromRow(await getWithdrawalRow(ctx.db, { withdrawalId: input.withdrawalId, merchantId })) };
    },
  };
}
