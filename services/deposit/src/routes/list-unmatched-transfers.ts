import type { DepositService } from "@payments/contracts/deposit";
import { cursorField, decodeCursor, encodeCursor, parseRequest, type ListPosition, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { pageLimit } from "../requests.js";
import { transferFromRow, type TransferRow } from "../store.js";

/**
 * The queue's cursor is the kit's (created_at, id) one holding the last transfer's
 * (reported_at, id). Only a transfer's id can be in it: another listing's cursor (a
 * deposit's, a withdrawal's) is not one this listing issued.
 */
function transferPosition(text: string): ListPosition | undefined {
  const position = decodeCursor(text);
  return position?.id.startsWith("trf_") ? position : undefined;
}

const request = z.object({
  limit: pageLimit(100, 500),
  includeReview: z.boolean(),
  reviewOnly: z.boolean(),
  olderThanMs: z.bigint().transform(Number).refine((v) => v >= 0, "must not be negative"),
  cursor: cursorField(transferPosition),
});

/**
 * What an operator still has to resolve, oldest first by (reported_at, id), a page at a time:
 * unmatched transfers (in suspense), with include_review also those in review, with
 * review_only those in review alone. The filters come with every page's request, so they
 * apply on every page; the cursor is the last transfer's position, so paging neither skips
 * nor repeats one.
 *
 * One read per status, each in the order of the (status, reported_at) index with the
 * primary key after it, merged here: a single `status IN (…)` read would sort every open
 * transfer after the cursor to return a page of them.
 */
export function listUnmatchedTransfers(ctx: DepositContext): Rpc<typeof DepositService, "listUnmatchedTransfers"> {
  return {
    async listUnmatchedTransfers(req) {
      const { limit, includeReview, reviewOnly, olderThanMs, cursor } = parseRequest(request, req);
      const statuses = reviewOnly ? ["review"] : includeReview ? ["unmatched", "review"] : ["unmatched"];
      const reportedBefore = olderThanMs > 0 ? ctx.clock.now().getTime() - olderThanMs : undefined;
      const reads = statuses.map(async (status) => {
        const query = ctx.db("incoming_transfers").where({ status });
        if (reportedBefore !== undefined) query.where("reported_at", "<", reportedBefore);
        if (cursor) {
          // Written as a range on reported_at first, so the index bounds the read.
          query.where("reported_at", ">=", cursor.createdAt).where((q) => {
            q.where("reported_at", ">", cursor.createdAt).orWhere("id", ">", cursor.id);
          });
        }
        return (await query.orderBy([{ column: "reported_at" }, { column: "id" }]).limit(limit + 1)) as TransferRow[];
      });
      const rows = (await Promise.all(reads)).flat().sort(oldestFirst);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        transfers: page.map((row) => transferFromRow(row)),
        nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: Number(last.reported_at), id: last.id }) : "",
      };
    },
  };
}

/** (reported_at, id) ascending, as the database orders each read (ids compared as the binary collation does). */
function oldestFirst(a: TransferRow, b: TransferRow): number {
  const byTime = Number(a.reported_at) - Number(b.reported_at);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
