import { WithdrawalStatus, type PayoutService } from "@payments/contracts/payout";
import { amountFilter, filterText, ibanFilter, newestFirstPage, parseRequest, whereStartsWith, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { decodeCursor } from "../cursor.js";
import { cursor, merchantScope, optionalTime, pageLimit, scopeFields } from "../requests.js";
import { statusFromProto, withdrawalFromRow, type WithdrawalRow } from "../store.js";

const request = z.object({
  ...scopeFields,
  status: z
    .number()
    .refine((s) => s === (WithdrawalStatus.UNSPECIFIED as number) || statusFromProto(s) !== undefined, "is not a withdrawal status")
    .transform((s) => statusFromProto(s)),
  createdFrom: optionalTime,
  createdTo: optionalTime,
  // Up to 1,000: an export (the merchant dashboard's CSV) walks 10,000 rows in ten calls. The gateway keeps its own smaller limit.
  limit: pageLimit(20, 1000),
  cursor: cursor(decodeCursor),
  awaitingOperator: z.boolean(),
  sandbox: z.boolean().optional(),
  iban: ibanFilter,
  holderName: filterText(200),
  amount: amountFilter,
});

/**
 * Newest first by (created_at, id); the cursor is the last item's position, so paging
 * neither skips nor repeats. One merchant's, or every merchant's when an operator sets
 * all_merchants. Each search filter (iban, holder_name, amount) is a range of its own index
 * (migration 20261129010000_list_filters), which is already in that order.
 */
export function listWithdrawals(ctx: PayoutContext): Rpc<typeof PayoutService, "listWithdrawals"> {
  return {
    async listWithdrawals(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      const query = ctx.db("withdrawals");
      if (merchantId !== undefined) query.where({ merchant_id: merchantId });
      if (input.status) query.where({ status: input.status });
      // What isAwaitingOperator (store.ts) says of a row, as a filter.
      if (input.awaitingOperator) query.where({ status: "processing", awaiting_operator: true });
      if (input.sandbox !== undefined) query.where({ sandbox: input.sandbox });
      if (input.createdFrom !== undefined) query.where("created_at", ">=", input.createdFrom);
      if (input.createdTo !== undefined) query.where("created_at", "<", input.createdTo);
      if (input.iban !== "") query.where({ iban: input.iban });
      if (input.holderName !== "") whereStartsWith(ctx.db, query, "account_name", input.holderName);
      if (input.amount !== undefined) query.where({ amount: input.amount });
      const page = await newestFirstPage<WithdrawalRow>(query, { limit: input.limit, after: input.cursor });
      return { withdrawals: page.rows.map(withdrawalFromRow), nextCursor: page.nextCursor };
    },
  };
}
