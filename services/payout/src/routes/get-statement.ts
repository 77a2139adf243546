import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { BalanceSchema, StatementLineSchema, type PayoutService } from "@payments/contracts/payout";
import { parseRequest, validationError, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { decodeStatementCursor, encodeStatementCursor, statementPage, type StatementBalance } from "../ledger.js";
import { currency, cursor, merchantId, pageLimit } from "../requests.js";

/** The longest statement range: a year and a day, so a leap year's whole year fits. */
export const STATEMENT_MAX_DAYS = 366;
const DAY_MS = 86_400_000;

const epochMs = z
  .bigint()
  .refine((v) => v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER), "must be epoch milliseconds, at least 0")
  .transform((v) => Number(v));

const balance = (b: StatementBalance) => create(BalanceSchema, { available: BigInt(b.available), held: BigInt(b.held) });

/** Lines per page: 0 asks for the default. */
export const STATEMENT_PAGE_DEFAULT = 1000;
export const STATEMENT_PAGE_MAX = 10_000;

/**
 * A merchant's own statement of one currency, a page at a time. Merchant-scoped only (no
 * all_merchants: a statement is one merchant's books). The currency must be configured, as
 * for a withdrawal; the range is checked here too, not only at the gateway, so every caller
 * gets the same bounds. Any number of lines: pages by the ledger's seq (ledger.ts,
 * statementPage), each page with the whole range's opening and closing.
 */
export function getStatement(ctx: PayoutContext): Rpc<typeof PayoutService, "getStatement"> {
  const request = z.object({
    merchantId,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    fromMs: epochMs,
    toMs: epochMs,
    limit: pageLimit(STATEMENT_PAGE_DEFAULT, STATEMENT_PAGE_MAX),
    cursor: cursor(decodeStatementCursor),
  });

  return {
    async getStatement(req) {
      const input = parseRequest(request, req);
      // After the fields parse (a zod refinement of the object would also see unparsed bigints).
      if (input.toMs <= input.fromMs) throw validationError("to_ms", "to_ms: must be later than from_ms");
      if (input.toMs - input.fromMs > STATEMENT_MAX_DAYS * DAY_MS) throw validationError("to_ms", `to_ms: must be at most ${STATEMENT_MAX_DAYS} days after from_ms`);
      const found = await statementPage(ctx.db, {
        merchantId: input.merchantId,
        currency: input.currency,
        fromMs: input.fromMs,
        toMs: input.toMs,
        limit: input.limit,
        after: input.cursor,
      });
      return {
        currency: input.currency,
        opening: balance(found.opening),
        lines: found.lines.map((line) =>
          create(StatementLineSchema, {
            entryId: line.id,
            createdAt: timestampFromMs(line.created_at),
            kind: line.kind,
            availableDelta: BigInt(line.available_delta),
            heldDelta: BigInt(line.held_delta),
            balanceAfter: BigInt(line.balance_after),
            transactionId: line.transaction_id,
            processId: line.process_id ?? "",
          }),
        ),
        closing: balance(found.closing),
        nextCursor: found.next ? encodeStatementCursor(found.next) : "",
      };
    },
  };
}
