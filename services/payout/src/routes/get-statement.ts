import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { BalanceSchema, StatementLineSchema } from "@payments/contracts/payout";
import { parseRequest, validationError } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { STATEMENT_MAX_LINES, statement, type StatementBalance } from "../ledger.js";
import { currency, merchantId } from "../requests.js";
import type { Rpc } from "./index.js";

/** The longest statement range: a year and a day, so a leap year's whole year fits. */
export const STATEMENT_MAX_DAYS = 366;
const DAY_MS = 86_400_000;

const epochMs = z
  .bigint()
  .refine((v) => v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER), "must be epoch milliseconds, at least 0")
  .transform((v) => Number(v));

const balance = (b: StatementBalance) => create(BalanceSchema, { available: BigInt(b.available), held: BigInt(b.held) });

/**
 * A merchant's own statement of one currency. Merchant-scoped only (no all_merchants: a
 * statement is one merchant's books). The currency must be configured, as for a withdrawal;
 * the range is checked here too, not only at the gateway, so every caller gets the same
 * bounds on what one statement can cost.
 */
export function getStatement(ctx: PayoutContext): Rpc<"getStatement"> {
  const request = z.object({ merchantId, currency: currency(ctx.config.SUPPORTED_CURRENCIES), fromMs: epochMs, toMs: epochMs });

  return {
    async getStatement(req) {
      const input = parseRequest(request, req);
      // After the fields parse (a zod refinement of the object would also see unparsed bigints).
      if (input.toMs <= input.fromMs) throw validationError("to_ms", "to_ms: must be later than from_ms");
      if (input.toMs - input.fromMs > STATEMENT_MAX_DAYS * DAY_MS) throw validationError("to_ms", `to_ms: must be at most ${STATEMENT_MAX_DAYS} days after from_ms`);
      const found = await statement(ctx.db, { merchantId: input.merchantId, currency: input.currency, fromMs: input.fromMs, toMs: input.toMs });
      if (!found) {
        throw validationError("to_ms", `to_ms: the range holds more than ${STATEMENT_MAX_LINES} ledger entries; ask for a shorter one`);
      }
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
      };
    },
  };
}
