import { TransferReturnStatus, type PayoutService } from "@payments/contracts/payout";
import { newestFirstPage, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { decodeCursor } from "../cursor.js";
import { cursor, pageLimit } from "../requests.js";
import { returnStatusFromProto, transferReturnFromRow, type TransferReturnRow } from "../transfer-returns.js";

const request = z.object({
  status: z
    .number()
    .refine((s) => s === (TransferReturnStatus.UNSPECIFIED as number) || returnStatusFromProto(s) !== undefined, "is not a transfer return status")
    .transform((s) => returnStatusFromProto(s)),
  awaitingOperator: z.boolean(),
  limit: pageLimit(20, 100),
  cursor: cursor(decodeCursor),
  transferId: z.string().max(40, "must be at most 40 characters"),
});

/** Newest first by (created_at, id), as withdrawals list; an operator's view (returns belong to no merchant). */
export function listTransferReturns(ctx: PayoutContext): Rpc<typeof PayoutService, "listTransferReturns"> {
  return {
    async listTransferReturns(req) {
      const input = parseRequest(request, req);
      const query = ctx.db("transfer_returns");
      if (input.status) query.where({ status: input.status });
      // What transferReturnFromRow says of awaiting_operator, as a filter.
      if (input.awaitingOperator) query.where({ status: "processing", awaiting_operator: true });
      if (input.transferId !== "") query.where({ transfer_id: input.transferId });
      const page = await newestFirstPage<TransferReturnRow>(query, { limit: input.limit, after: input.cursor });
      return { transferReturns: page.rows.map(transferReturnFromRow), nextCursor: page.nextCursor };
    },
  };
}
