import { DepositStatus, type DepositService } from "@payments/contracts/deposit";
import { amountFilter, cursorField, decodeCursor, filterText, ibanFilter, merchantScope, merchantScopeFields, newestFirstPage, optionalTimestamp, parseRequest, whereStartsWith, type Rpc } from "@payments/kit";
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
  // References are stored upper case (reference.ts), so any case finds one.
  reference: z
    .string()
    .trim()
    .transform((v) => v.toUpperCase())
    .refine((v) => /^[A-Z0-9]{0,16}$/.test(v), "must be a deposit reference: letters and digits, at most 16"),
  customerId: filterText(200),
  customerName: filterText(200),
  accountIban: ibanFilter,
  amount: amountFilter,
});

/**
 * Newest first by (created_at, id), paged by key. Each search filter is a range of its own
 * index (migration 20261129000000_list_filters), which is already in that order.
 */
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
      if (input.reference !== "") query.where({ reference: input.reference });
      if (input.customerId !== "") query.where({ customer_id: input.customerId });
      if (input.customerName !== "") whereStartsWith(ctx.db, query, "customer_name", input.customerName);
      if (input.accountIban !== "") query.where({ account_iban: input.accountIban });
      if (input.amount !== undefined) query.where({ amount: input.amount });
      const page = await newestFirstPage<DepositRow>(query, { limit: input.limit, after: input.cursor });
      return { deposits: page.rows.map(depositFromRow), nextCursor: page.nextCursor };
    },
  };
}
