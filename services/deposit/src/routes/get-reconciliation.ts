import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { AccountReconciliationSchema, DepositCreditSchema, type DepositService } from "@payments/contracts/deposit";
import { validationError, type Rpc } from "@payments/kit";
import type { DepositContext } from "../context.js";
import { reconcile } from "../reconciliation.js";

/** Received against credited, in suspense and returned, per receiving account and currency (src/reconciliation.ts). */
export function getReconciliation(ctx: DepositContext): Rpc<typeof DepositService, "getReconciliation"> {
  return {
    async getReconciliation(req) {
      const from = req.from ? timestampMs(req.from) : undefined;
      const to = req.to ? timestampMs(req.to) : undefined;
      if (from !== undefined && to !== undefined && from >= to) throw validationError("from", "from: must be before to");
      const result = await reconcile(ctx.db, { from, to });
      return {
        accounts: result.accounts.map((a) =>
          create(AccountReconciliationSchema, {
            iban: a.iban,
            currency: a.currency,
            received: BigInt(a.received),
            credited: BigInt(a.credited),
            suspense: BigInt(a.suspense),
            returned: BigInt(a.returned),
            difference: BigInt(a.difference),
            discrepancies: a.discrepancies,
          }),
        ),
        credits: result.credits.map((c) => create(DepositCreditSchema, { depositId: c.depositId, merchantId: c.merchantId, amount: BigInt(c.amount), currency: c.currency })),
      };
    },
  };
}
