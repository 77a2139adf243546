import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { pageLimit } from "../requests.js";
import { transferFromRow, type TransferRow } from "../store.js";
import type { Rpc } from "./index.js";

const request = z.object({
  limit: pageLimit(100, 500),
  includeReview: z.boolean(),
  olderThanMs: z.bigint().transform(Number).refine((v) => v >= 0, "must not be negative"),
});

/** What an operator still has to resolve, oldest first: unmatched transfers (in suspense), and with include_review those in review. */
export function listUnmatchedTransfers(ctx: DepositContext): Rpc<"listUnmatchedTransfers"> {
  return {
    async listUnmatchedTransfers(req) {
      const { limit, includeReview, olderThanMs } = parseRequest(request, req);
      const query = ctx.db("incoming_transfers").whereIn("status", includeReview ? ["unmatched", "review"] : ["unmatched"]);
      if (olderThanMs > 0) query.where("reported_at", "<", ctx.clock.now().getTime() - olderThanMs);
      const rows = (await query.orderBy([{ column: "reported_at" }, { column: "id" }]).limit(limit)) as TransferRow[];
      return { transfers: rows.map((row) => transferFromRow(row)) };
    },
  };
}
