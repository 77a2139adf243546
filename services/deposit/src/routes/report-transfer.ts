import type { DepositService } from "@payments/contracts/deposit";
import { parseRequest, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { amount, currency, iban, text } from "../requests.js";
import { depositFromRow, transferFromRow } from "../store.js";
import { recordTransfer } from "../transfers.js";

export function reportTransfer(ctx: DepositContext): Rpc<typeof DepositService, "reportTransfer"> {
  const request = z.object({
    iban,
    amount,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    // Banks do not always name the sender: such a transfer is recorded all the same (a return then needs the operator to give the name).
    senderName: z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? "" : v), z.union([z.literal(""), text(200)])),
    reference: z.string().trim().max(500, "must be at most 500 characters"),
    bankTransactionId: text(100),
    valueDate: z.union([z.literal(""), z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date, YYYY-MM-DD")]),
    senderIban: z.union([z.literal(""), iban]),
  });
  return {
    async reportTransfer(req) {
      const input = parseRequest(request, req);
      // Who reports it, from the call's verified scope (a bank integration's identity, or an
      // operator and the workload carrying them): a string, no query, on the hot path.
      const reportedBy = callerAttribution("deposit");
      const outcome = await recordTransfer(ctx, { ...input, valueDate: input.valueDate || undefined, senderIban: input.senderIban || undefined, source: "api", reportedBy });
      return {
        transfer: transferFromRow(outcome.transfer),
        deposit: outcome.deposit && depositFromRow(outcome.deposit),
        duplicate: outcome.duplicate,
      };
    },
  };
}
