import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { amount, currency, iban, text } from "../requests.js";
import { depositFromRow, transferFromRow } from "../store.js";
import { recordTransfer } from "../transfers.js";
import type { Rpc } from "./index.js";

export function reportTransfer(ctx: DepositContext): Rpc<"reportTransfer"> {
  const request = z.object({
    iban,
    amount,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    senderName: text(200),
    reference: z.string().trim().max(500, "must be at most 500 characters"),
    bankTransactionId: text(100),
  });
  return {
    async reportTransfer(req) {
      const input = parseRequest(request, req);
      const outcome = await recordTransfer(ctx, input);
      return {
        transfer: transferFromRow(outcome.transfer),
        deposit: outcome.deposit && depositFromRow(outcome.deposit),
        duplicate: outcome.duplicate,
      };
    },
  };
}
