import { WithheldCreditStatus, type PayoutService } from "@payments/contracts/payout";
import { newestFirstPage, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { decodeCursor } from "../cursor.js";
import { cursor, pageLimit } from "../requests.js";
import { withheldCreditFromRow, withheldStatusFromProto, type WithheldCreditRow } from "../withheld-credits.js";

const request = z.object({
  // The contract makes an empty merchant_id "every merchant's": the list is an operator's
  // worklist, which no merchant's caller is given (the gateway has no route to it).
  merchantId: z.string().max(100, "must be at most 100 characters"),
  status: z
    .number()
    .refine((s) => s === (WithheldCreditStatus.UNSPECIFIED as number) || withheldStatusFromProto(s) !== undefined, "is not a withheld credit status")
    .transform((s) => withheldStatusFromProto(s)),
  limit: pageLimit(20, 100),
  cursor: cursor(decodeCursor),
});

/** Newest first by (created_at, id), as withdrawals list; filters merchant and status. */
export function listWithheldCredits(ctx: PayoutContext): Rpc<typeof PayoutService, "listWithheldCredits"> {
  return {
    async listWithheldCredits(req) {
      const input = parseRequest(request, req);
      const query = ctx.db("withheld_credits");
      if (input.merchantId !== "") query.where({ merchant_id: input.merchantId });
      if (input.status) query.where({ status: input.status });
      const page = await newestFirstPage<WithheldCreditRow>(query, { limit: input.limit, after: input.cursor });
      return { credits: page.rows.map(withheldCreditFromRow), nextCursor: page.nextCursor };
    },
  };
}
