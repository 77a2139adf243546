import type { Client } from "@connectrpc/connect";
import type { Deposit, DepositService } from "@payments/contracts/deposit";
import type { Clock } from "@payments/kit";
import { depositRecord } from "@payments/records";
import { z } from "zod";
import { success } from "../envelope.js";
import { ApiError, callAboutTransaction } from "../errors.js";
import type { RouteContext } from "../state.js";
import { DEPOSIT_FIELDS } from "./deposits.js";
import { amountField, authenticatedMerchant, optionalText, parseInput, type Route } from "./route.js";
import { SCOPES } from "../key-scopes.js";

type SandboxDeposits = Pick<Client<typeof DepositService>, "sandboxPayDeposit" | "sandboxExpireDeposit">;

/**
 * The optional body of POST /v1/sandbox/deposit/{transactionId}/pay. Both fields may be
 * left out (or the body sent empty): the transfer then carries the deposit's amount and its
 * customer's name. senderName's limits are the deposit service's, stated here (route.ts) so
 * the OpenAPI document shows them. Unknown fields are ignored.
 */
export const sandboxPayBody = z.object({
  /** The amount transferred, kuruş; another than the deposit's is handled as a real transfer of it would be. */
  amount: amountField.nullish(),
  /** The transfer's sender name; default the deposit's customer name. */
  senderName: optionalText(),
});

export type SandboxPayBody = z.output<typeof sandboxPayBody>;

const SANDBOX_FIELDS: Readonly<Record<string, string>> = { ...DEPOSIT_FIELDS, sender_name: "senderName" };

const SANDBOX_ONLY_MESSAGE = "The sandbox helpers are available to sandbox merchants only";

/**
 * Refused here already for a merchant the gateway knows to be live, so a live merchant's
 * call never reaches the deposit service. The service checks again, afresh and against the
 * deposit's own sandbox flag: that check is the one that counts.
 */
function requireSandboxMerchant(ctx: RouteContext): string {
  const merchant = authenticatedMerchant(ctx);
  if (!merchant.sandbox) throw new ApiError(403, "SANDBOX_ONLY", SANDBOX_ONLY_MESSAGE);
  return merchant.merchantId;
}

/** A call about the deposit in the path: 404 for an unknown or unparsable id, service reasons (SANDBOX_ONLY too) as public errors. */
function sandboxCall<T>(call: Promise<T>): Promise<T> {
  return callAboutTransaction(call, { fields: SANDBOX_FIELDS, idField: "deposit_id", noun: "deposit" });
}

function deposit(res: { deposit?: Deposit }): Deposit {
  if (!res.deposit) throw new Error("the deposit service answered without a deposit");
  return res.deposit;
}

/**
 * Test helpers for a sandbox merchant's own CI, signed like every merchant request:
 * POST /v1/sandbox/deposit/{transactionId}/pay (a matching incoming transfer, through the
 * path of a real bank report) and POST /v1/sandbox/deposit/{transactionId}/expire (the
 * expiry job's move, now). Each answers 200 with the deposit record, as GET
 * /v1/deposit/{transactionId} would after the move.
 */
export function sandbox(deps: { deposits: SandboxDeposits; clock: Clock; publicBaseUrl: string }): Route[] {
  const answer = (ctx: RouteContext, res: { deposit?: Deposit }) => {
    ctx.status = 200;
    ctx.body = success(depositRecord(deposit(res), deps.publicBaseUrl), deps.clock);
  };
  return [
    {
      method: "POST",
      path: "/v1/sandbox/deposit/:transactionId/pay",
      access: "merchant",
      scopes: SCOPES.deposits,
      // An empty body is accepted (the defaults apply); a non-empty one must be a JSON object.
      body: "none",
      handler: async (ctx) => {
        const merchantId = requireSandboxMerchant(ctx);
        const body = parseInput(sandboxPayBody, ctx.state.body ?? {}, "body");
        const res = await sandboxCall(
          deps.deposits.sandboxPayDeposit({
            merchantId,
            depositId: ctx.params.transactionId ?? "",
            amount: body.amount == null ? undefined : BigInt(body.amount),
            senderName: body.senderName ?? "",
          }),
        );
        answer(ctx, res);
      },
    },
    {
      method: "POST",
      path: "/v1/sandbox/deposit/:transactionId/expire",
      access: "merchant",
      scopes: SCOPES.deposits,
      body: "none",
      handler: async (ctx) => {
        const merchantId = requireSandboxMerchant(ctx);
        const res = await sandboxCall(deps.deposits.sandboxExpireDeposit({ merchantId, depositId: ctx.params.transactionId ?? "" }));
        answer(ctx, res);
      },
    },
  ];
}
