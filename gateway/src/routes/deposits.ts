import type { Client } from "@connectrpc/connect";
import type { Deposit, DepositService } from "@payments/contracts/deposit";
import type { Clock } from "@payments/kit";
import { depositRecord } from "@payments/records";
import { z } from "zod";
import { success } from "../envelope.js";
import { callAboutTransaction, callService } from "../errors.js";
import type { RouteContext } from "../state.js";
import { authenticatedMerchantId, amountField, missing, optionalString, parseInput, queryValue, requiredString, type Route } from "./route.js";

type Deposits = Pick<Client<typeof DepositService>, "createDeposit" | "getDeposit" | "cancelDeposit">;

/**
 * The merchant's JSON names of the deposit service's request fields, for the VALIDATION_ERROR
 * the service returns (its x-error-field and message prefix are proto paths).
 */
export const DEPOSIT_FIELDS: Readonly<Record<string, string>> = {
  process_id: "processId",
  bank_id: "bankCode",
  metadata_json: "metadata",
  customer: "customer",
  amount: "amount",
  currency: "currency",
};

/**
 * The shape of POST /v1/deposit, and only the shape: lengths, trimming, currency support,
 * bank availability, limits and duplicates are the deposit service's rules, judged there.
 * Unknown fields are ignored.
 */
export const createDepositBody = z.object({
  processId: requiredString,
  amount: amountField,
  currency: optionalString,
  bankCode: optionalString,
  customer: z.object(
    { id: requiredString, name: requiredString, username: requiredString },
    { error: (issue) => (missing(issue.input) ? "is required" : "must be an object") },
  ),
  metadata: z
    .custom<Record<string, unknown>>((value) => typeof value === "object" && value !== null && !Array.isArray(value), { error: "must be a JSON object" })
    .nullish(),
});

export type CreateDepositBody = z.output<typeof createDepositBody>;

export const byProcessIdQuery = z.object({ processId: queryValue });


function deposit(res: { deposit?: Deposit }): Deposit {
  if (!res.deposit) throw new Error("the deposit service answered without a deposit");
  return res.deposit;
}


export function deposits(deps: { deposits: Deposits; clock: Clock; publicBaseUrl: string }): Route[] {
  const answer = (ctx: RouteContext, status: number, res: { deposit?: Deposit }) => {
    ctx.status = status;
    ctx.body = success(depositRecord(deposit(res), deps.publicBaseUrl), deps.clock);
  };

  return [
    {
      method: "POST",
      path: "/v1/deposit",
      access: "merchant",
      handler: async (ctx) => {
        const body = parseInput(createDepositBody, ctx.state.body, "body");
        const res = await callService(
          deps.deposits.createDeposit({
            merchantId: authenticatedMerchantId(ctx),
            processId: body.processId,
            amount: BigInt(body.amount),
            currency: body.currency ?? "",
            bankId: body.bankCode ?? "",
            customer: body.customer,
            metadataJson: body.metadata ? JSON.stringify(body.metadata) : "",
          }),
          { fields: DEPOSIT_FIELDS },
        );
        answer(ctx, 201, res);
      },
    },
    {
      method: "GET",
      path: "/v1/deposit",
      access: "merchant",
      handler: async (ctx) => {
        const { processId } = parseInput(byProcessIdQuery, ctx.query, "query");
        const res = await callService(deps.deposits.getDeposit({ merchantId: authenticatedMerchantId(ctx), key: { case: "processId", value: processId } }), {
          fields: DEPOSIT_FIELDS,
        });
        answer(ctx, 200, res);
      },
    },
    {
      method: "GET",
      path: "/v1/deposit/:transactionId",
      access: "merchant",
      handler: async (ctx) => {
        const transactionId = ctx.params.transactionId ?? "";
        const res = await callAboutTransaction(deps.deposits.getDeposit({ merchantId: authenticatedMerchantId(ctx), key: { case: "depositId", value: transactionId } }), {
          fields: DEPOSIT_FIELDS,
          idField: "deposit_id",
          noun: "deposit",
        });
        answer(ctx, 200, res);
      },
    },
    {
      method: "POST",
      path: "/v1/deposit/:transactionId/cancel",
      access: "merchant",
      body: "none",
      handler: async (ctx) => {
        const transactionId = ctx.params.transactionId ?? "";
        // A repeated cancel answers 200 with the deposit unchanged (the service is idempotent on it).
        const res = await callAboutTransaction(deps.deposits.cancelDeposit({ merchantId: authenticatedMerchantId(ctx), depositId: transactionId }), { fields: DEPOSIT_FIELDS, idField: "deposit_id", noun: "deposit" });
        answer(ctx, 200, res);
      },
    },
  ];
}
