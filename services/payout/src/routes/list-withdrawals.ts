import { WithdrawalStatus } from "@payments/contracts/payout";
import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import { cursor, optionalMerchantId, optionalTime, pageLimit } from "../requests.js";
import { statusFromProto, withdrawalFromRow, type WithdrawalRow } from "../store.js";
import type { Rpc } from "./index.js";

const request = z.object({
  merchantId: optionalMerchantId,
  status: z
    .number()
    .refine((s) => s === WithdrawalStatus.UNSPECIFIED || statusFromProto(s) !== undefined, "is not a withdrawal status")
    .transform((s) => statusFromProto(s)),
  createdFrom: optionalTime,
  createdTo: optionalTime,
  limit: pageLimit(20, 100),
  cursor: cursor(decodeCursor),
});

/** Newest first by (created_at, id); the cursor is the last item's position, so paging neither skips nor repeats. */
export function listWithdrawals(ctx: PayoutContext): Rpc<"listWithdrawals"> {
  return {
    async listWithdrawals(req) {
      const input = parseRequest(request, req);
      const query = ctx.db("withdrawals").orderBy([
        { column: "created_at", order: "desc" },
        { column: "id", order: "desc" },
      ]);
      if (input.merchantId) query.where({ merchant_id: input.merchantId });
      if (input.status) query.where({ status: input.status });
      if (input.createdFrom !== undefined) query.where("created_at", ">=", input.createdFrom);
      if (input.createdTo !== undefined) query.where("created_at", "<", input.createdTo);
      const after = input.cursor;
      if (after) {
        query.where((q) => q.where("created_at", "<", after.createdAt).orWhere((q2) => q2.where("created_at", after.createdAt).where("id", "<", after.id)));
      }
      const rows = (await query.limit(input.limit + 1)) as WithdrawalRow[];
      const page = rows.slice(0, input.limit);
      const last = page.at(-1);
      return {
        withdrawals: page.map(withdrawalFromRow),
        nextCursor: rows.length > input.limit && last ? encodeCursor({ createdAt: Number(last.created_at), id: last.id }) : "",
      };
    },
  };
}
