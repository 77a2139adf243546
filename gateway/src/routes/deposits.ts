import type { Client } from "@connectrpc/connect";
import type { Deposit, DepositService } from "@payments/contracts/deposit";
import type { Clock } from "@payments/kit";
import { depositRecord } from "@payments/records";
import { z } from "zod";
import { success } from "../envelope.js";
import { callAboutTransaction, callService } from "../errors.js";
import type { RouteContext } from "../state.js";
import { authenticatedMerchantId, amountField, missing, optionalBankId, optionalString, parseInput, processIdField, processIdQueryValue, requiredText, type Route } from "./route.js";
import { SCOPES } from "../key-scopes.js";

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
  return_url: "returnUrl",
};

/** The longest return URL the deposit service keeps (services/deposit/src/return-url.ts). */
export const RETURN_URL_MAX = 2000;

/**
 * `returnUrl`: none (absent, null or ""), or an absolute `https://` or `http://` URL without
 * credentials, at most 2,000 characters. Patterns, not refinements, so the OpenAPI document
 * states them; the scheme's letters in either case, as URLs allow. That http is only for
 * sandbox merchants, and that the URL parses, is the deposit service's rule: its refusals
 * name returnUrl too (DEPOSIT_FIELDS).
 */
export const optionalReturnUrl = z
  .string({ error: "must be a string" })
  .max(RETURN_URL_MAX, `must be at most ${RETURN_URL_MAX} characters`)
  .regex(/^$|^[hH][tT][tT][pP][sS]?:\/\//, "must be an absolute https URL (http only for sandbox merchants)")
  .regex(/^$|^[^/]*\/\/[^/?#@\\]*(?:[/?#\\]|$)/, "must not contain credentials (user:password@)")
  .nullish()
  .describe(
    "Where the checkout page sends the customer back to you: an absolute https URL (http only for sandbox merchants), at most 2,000 characters, without credentials. Stored normalised (as a browser would open it) and shown as the deposit's returnUrl.",
  );

/**
 * POST /v1/deposit: the shape, and the service's fixed limits on lengths and characters
 * (route.ts), so the OpenAPI document states them. Currency support, bank availability,
 * amount limits, the metadata's size and duplicates are the deposit service's rules, judged
 * there. Unknown fields are ignored.
 */
export const createDepositBody = z.object({
  processId: processIdField,
  amount: amountField,
  currency: optionalString,
  bankCode: optionalBankId,
  customer: z.object(
    { id: requiredText(), name: requiredText(), username: requiredText() },
    { error: (issue) => (missing(issue.input) ? "is required" : "must be an object") },
  ),
  metadata: z
    .custom<Record<string, unknown>>((value) => typeof value === "object" && value !== null && !Array.isArray(value), { error: "must be a JSON object" })
    .nullish(),
  returnUrl: optionalReturnUrl,
});

export type CreateDepositBody = z.output<typeof createDepositBody>;

export const byProcessIdQuery = z.object({ processId: processIdQueryValue });


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
      scopes: SCOPES.deposits,
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
            returnUrl: body.returnUrl ?? "",
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
      scopes: SCOPES.readDeposits,
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
      scopes: SCOPES.readDeposits,
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
      scopes: SCOPES.deposits,
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
