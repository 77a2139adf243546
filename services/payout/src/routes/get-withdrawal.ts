import { parseRequest, validationError } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { optionalMerchantId, processId, withdrawalId } from "../requests.js";
import { getWithdrawalRow, withdrawalFromRow } from "../store.js";
import type { Rpc } from "./index.js";

// The oneof is flattened first, so a refusal names withdrawal_id or process_id, not "key".
const byId = z.object({ merchantId: optionalMerchantId, withdrawalId });
const byProcess = z.object({ merchantId: optionalMerchantId, processId });

/** A merchant's caller (merchant_id set) sees only its own withdrawals; an operator (empty) any, by id. */
export function getWithdrawal(ctx: PayoutContext): Rpc<"getWithdrawal"> {
  return {
    async getWithdrawal(req) {
      if (req.key.case === undefined) throw validationError("withdrawal_id", "withdrawal_id: is required (or process_id with merchant_id)");
      if (req.key.case === "processId") {
        const input = parseRequest(byProcess, { merchantId: req.merchantId, processId: req.key.value });
        if (!input.merchantId) throw validationError("merchant_id", "merchant_id: is required to find a withdrawal by process_id");
        return { withdrawal: withdrawalFromRow(await getWithdrawalRow(ctx.db, { processId: input.processId, merchantId: input.merchantId })) };
      }
      const input = parseRequest(byId, { merchantId: req.merchantId, withdrawalId: req.key.value });
      return { withdrawal: withdrawalFromRow(await getWithdrawalRow(ctx.db, { withdrawalId: input.withdrawalId, merchantId: input.merchantId })) };
    },
  };
}
