import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, summarizeByDay, summaryRange, summaryRequest, type Rpc } from "@payments/kit";
import type { PayoutContext } from "../context.js";

/** The withdrawal statuses as a summary counts them: pending and processing are open. */
const STATUSES = { completed: "completed", failed: ["failed"], cancelled: ["cancelled"], open: ["pending", "processing"] } as const;

/**
 * One merchant's withdrawals created in a range of at most 92 days, counted in the database
 * (kit summarizeByDay: grouped by the time zone's day and status over the
 * (merchant_id, created_at) index; the median time to pay out is the middle of the completed
 * ones' durations, ordered in SQL, of which only the middle one or two rows are read).
 */
export function summarizeWithdrawals(ctx: PayoutContext): Rpc<typeof PayoutService, "summarizeWithdrawals"> {
  return {
    async summarizeWithdrawals(req) {
      const input = parseRequest(summaryRequest, req);
      const range = summaryRange(input);
      const { totals, days } = await summarizeByDay(ctx.db, { table: "withdrawals", merchantId: input.merchantId, currency: input.currency, sandbox: input.sandbox, ...range, statuses: STATUSES });
      return { totals, days, timeZone: range.timeZone };
    },
  };
}
