import { DepositStatus, type DepositService } from "@payments/contracts/deposit";
import { amountFilter, cursorField, decodeCursor, filterText, ibanFilter, isMysql, merchantScope, merchantScopeFields, newestFirstPage, optionalTimestamp, parseRequest, whereStartsWith, type Rpc } from "@payments/kit";
import type { Knex } from "knex";
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
  // Up to 1,000: an export (the merchant dashboard's CSV) walks 10,000 rows in ten calls. The gateway keeps its own smaller limit.
  limit: pageLimit(20, 1000),
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
  // Unset: both, as before the field existed.
  sandbox: z.boolean().optional(),
});

/**
 * Newest first by (created_at, id), paged by key. Each search filter is a range of its own
 * index (migration 20261129000000_list_filters), which is already in that order. One merchant's
 * list without such a filter reads that merchant's index from the cursor down (on MySQL the
 * index is named: with a status or a past date range the optimizer would otherwise read the
 * merchant's rows from the newest down on every page). One merchant's search by a customer's
 * name finds the page's ids from its own covering index first, then reads only those rows.
 */
export function listDeposits(ctx: DepositContext): Rpc<typeof DepositService, "listDeposits"> {
  type Input = z.infer<typeof request>;
  const filtered = <Q extends Knex.QueryBuilder>(query: Q, input: Input, merchantId: string | undefined): Q => {
    if (merchantId !== undefined) query.where({ merchant_id: merchantId });
    if (input.status) query.where({ status: input.status });
    if (input.createdFrom !== undefined) query.where("created_at", ">=", input.createdFrom);
    if (input.createdTo !== undefined) query.where("created_at", "<", input.createdTo);
    if (input.reference !== "") query.where({ reference: input.reference });
    if (input.customerId !== "") query.where({ customer_id: input.customerId });
    if (input.customerName !== "") whereStartsWith(ctx.db, query, "customer_name", input.customerName);
    if (input.accountIban !== "") query.where({ account_iban: input.accountIban });
    if (input.amount !== undefined) query.where({ amount: input.amount });
    if (input.sandbox !== undefined) query.where({ sandbox: input.sandbox });
    return query;
  };
  /** `deposits`, with the index named on MySQL (SQLite picks well and has no such hint). */
  const table = (index: string): Knex.QueryBuilder => (isMysql(ctx.db) ? ctx.db.from(ctx.db.raw("?? force index (??)", ["deposits", index])) : ctx.db("deposits"));

  return {
    async listDeposits(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      const selective = input.reference !== "" || input.customerId !== "" || input.accountIban !== "" || input.amount !== undefined;
      if (merchantId !== undefined && !selective && input.customerName !== "") {
        const keys = await newestFirstPage<{ id: string; created_at: number }>(filtered(table("deposits_merchant_name").select(["id", "created_at"]), input, merchantId), {
          limit: input.limit,
          after: input.cursor,
        });
        const byId = new Map(((await ctx.db("deposits").whereIn("id", keys.rows.map((k) => k.id))) as DepositRow[]).map((row) => [row.id, row]));
        const rows = keys.rows.flatMap((k) => byId.get(k.id) ?? []);
        return { deposits: rows.map(depositFromRow), nextCursor: keys.nextCursor };
      }
      const query = merchantId !== undefined && !selective ? table("deposits_merchant_created") : ctx.db("deposits");
      const page = await newestFirstPage<DepositRow>(filtered(query, input, merchantId), { limit: input.limit, after: input.cursor });
      return { deposits: page.rows.map(depositFromRow), nextCursor: page.nextCursor };
    },
  };
}
