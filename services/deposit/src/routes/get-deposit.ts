import type { DepositService } from "@payments/contracts/deposit";
import { merchantScope, merchantScopeFields, parseRequest, validationError, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { depositId, processId } from "../requests.js";
import { depositFromRow, getDepositRow } from "../store.js";

// The oneof is flattened first, so a refusal names deposit_id or process_id, not "key".
const byId = z.object({ ...merchantScopeFields, depositId });
const byProcess = z.object({ ...merchantScopeFields, processId });

export function getDeposit(ctx: DepositContext): Rpc<typeof DepositService, "getDeposit"> {
  return {
    async getDeposit(req) {
      if (req.key.case === undefined) throw validationError("deposit_id", "deposit_id: is required (or process_id with merchant_id)");
      if (req.key.case === "processId") {
        const input = parseRequest(byProcess, { merchantId: req.merchantId, allMerchants: req.allMerchants, processId: req.key.value });
        // A process id is the merchant's own: across merchants it names nothing.
        const merchant = input.merchantId === "" ? undefined : input.merchantId;
        if (!merchant) throw validationError("merchant_id", "merchant_id: is required to find a deposit by process_id");
        return { deposit: depositFromRow(await getDepositRow(ctx.db, { processId: input.processId, merchantId: merchant })) };
      }
      const input = parseRequest(byId, { merchantId: req.merchantId, allMerchants: req.allMerchants, depositId: req.key.value });
      const merchant = merchantScope(input);
      return { deposit: depositFromRow(await getDepositRow(ctx.db, { depositId: input.depositId, merchantId: merchant })) };
    },
  };
}
