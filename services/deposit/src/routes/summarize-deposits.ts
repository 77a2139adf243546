import type { DepositService } from "@payments/contracts/deposit";
import { parseRequest, summarizeByDay, summaryRange, summaryRequest, type Rpc } from "@payments/kit";
import type { DepositContext } from "../context.js";

/** The deposit statuses as a summary counts them: never paid (failed, expired) counts as failed. */
const STATUSES = { completed: "completed", failed: ["failed", "expired"], cancelled: ["cancelled"], open: ["pending"] } as const;

/**
 * One merchant's deposits created in a range of at most 92 days, counted in the database
 * (kit summarizeByDay: grouped by the time zone's day and status over the
 * (merchant_id, created_at) index; the median time to pay is the middle of the completed
 * ones' durations, ordered in SQL, of which only the middle one or two rows are read).
 */
export function summarizeDeposits(ctx: DepositContext): Rpc<typeof DepositService, "summarizeDeposits"> {
  return {
    async summarizeDeposits(req) {
      const input = parseRequest(summaryRequest, req);
      const range = summaryRange(input);
      const { totals, days } = await summarizeByDay(ctx.db, { table: "deposits", merchantId: input.merchantId, currency: input.currency, sandbox: input.sandbox, ...range, statuses: STATUSES });
      return { totals, days, timeZone: range.timeZone };
    },
  };
}
