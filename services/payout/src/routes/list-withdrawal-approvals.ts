import type { PayoutService } from "@payments/contracts/payout";
import { newestFirstPage, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { decodeCursor } from "../cursor.js";
import { cursor, merchantId, pageLimit } from "../requests.js";
import { withdrawalFromRow, type WithdrawalRow } from "../store.js";

const request = z.object({ merchantId, limit: pageLimit(20, 100), cursor: cursor(decodeCursor) });

/**
 * What waits for the merchant's own four-eyes (src/withdrawal-approval.ts): its API keys'
 * withdrawals above its threshold, pending, held, undecided and not lapsed. Newest first by
 * (created_at, id), one range of the (merchant_id, approval, created_at, id) index.
 */
export function listWithdrawalApprovals(ctx: PayoutContext): Rpc<typeof PayoutService, "listWithdrawalApprovals"> {
  return {
    async listWithdrawalApprovals(req) {
      const input = parseRequest(request, req);
      const now = ctx.clock.now().getTime();
      const query = ctx.db("withdrawals").where({ merchant_id: input.merchantId, approval: "awaiting", status: "pending" }).where("approval_expires_at", ">", now);
      const page = await newestFirstPage<WithdrawalRow>(query, { limit: input.limit, after: input.cursor });
      return { withdrawals: page.rows.map(withdrawalFromRow), nextCursor: page.nextCursor };
    },
  };
}
