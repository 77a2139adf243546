import { DepositStatus, type DepositService } from "@payments/contracts/deposit";
import { cursorField, decodeCursor, merchantScope, merchantScopeFields, newestFirstPage, optionalTimestamp, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { pageLimit } from "../requests.js";
import { depositFromRow, statusFromProto, type DepositRow } from "../store.js";

const request = z.object({
  ...merchantScopeFields,
  status: z
    .number()
    .refine((s) => s === (DepositStatus.UNSPECIFIED as number) || statusFromProto(s) !== undefined, "is not a deposit status")
    .transform((s) => statusFromProto(s)),
  createdFrom: optionalTimestamp,
  createdTo: optionalTimestamp,
  limit: pageLimit(20, 100),
  cursor: cursorField(decodeCursor),
});

export function listDeposits(ctx: DepositContext): Rpc<typeof DepositService, "listDeposits"> {
  return {
    async listDeposits(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      const query = ctx.db("deposits");
      if (merchantId !== undefined) query.where({ merchant_id: merchantId });
      if (input.status) query.where({ status: input.status });
      if (input.createdFrom !== undefined) query.where("created_at", ">=", input.createdFrom);
      if (input.createdTo !== undefined) query.where("created_at", "<", input.createdTo);
      const page = await newestFirstPage<DepositRow>(query, { limit: input.limit, after: input.cursor });
      return { deposits: page.rows.map(depositFromRow), nextCursor: page.nextCursor };
    },
  };
}
