import type { Client } from "@connectrpc/connect";
import type { PayoutService, Withdrawal } from "@payments/contracts/payout";
import type { Clock } from "@payments/kit";
import { balanceRecord, createWithdrawalBody, createWithdrawalRequest, WITHDRAWAL_FIELDS, withdrawalRecord } from "@payments/records";
import { z } from "zod";
import { success } from "../envelope.js";
import { callAboutTransaction, callService } from "../errors.js";
import type { RouteContext } from "../state.js";
import { authenticatedMerchantId, parseInput, processIdQueryValue, type Route } from "./route.js";
import { SCOPES } from "../key-scopes.js";

type Payouts = Pick<Client<typeof PayoutService>, "createWithdrawal" | "getWithdrawal" | "cancelWithdrawal" | "getBalances">;

export { createWithdrawalBody, WITHDRAWAL_FIELDS, type CreateWithdrawalBody } from "@payments/records";

export const byProcessIdQuery = z.object({ processId: processIdQueryValue });


function withdrawal(res: { withdrawal?: Withdrawal }): Withdrawal {
  if (!res.withdrawal) throw new Error("the payout service answered without a withdrawal");
  return res.withdrawal;
}


/** POST/GET /v1/withdraw…, the cancel, and GET /v1/balance: all from the payout service. */
export function withdrawals(deps: { payouts: Payouts; clock: Clock }): Route[] {
  const answer = (ctx: RouteContext, status: number, res: { withdrawal?: Withdrawal }) => {
    ctx.status = status;
    ctx.body = success(withdrawalRecord(withdrawal(res)), deps.clock);
  };

  return [
    {
      method: "POST",
      path: "/v1/withdraw",
      access: "merchant",
      scopes: SCOPES.withdrawals,
      // Money leaves: only from a listed IP, and an empty list refuses every caller (decisions.md).
      requireAllowList: true,
      handler: async (ctx) => {
        const body = parseInput(createWithdrawalBody, ctx.state.body, "body");
        const res = await callService(deps.payouts.createWithdrawal(createWithdrawalRequest(authenticatedMerchantId(ctx), body)), { fields: WITHDRAWAL_FIELDS });
        answer(ctx, 201, res);
      },
    },
    {
      method: "GET",
      path: "/v1/withdraw",
      access: "merchant",
      scopes: SCOPES.readWithdrawals,
      handler: async (ctx) => {
        const { processId } = parseInput(byProcessIdQuery, ctx.query, "query");
        const res = await callService(deps.payouts.getWithdrawal({ merchantId: authenticatedMerchantId(ctx), key: { case: "processId", value: processId } }), {
          fields: WITHDRAWAL_FIELDS,
        });
        answer(ctx, 200, res);
      },
    },
    {
      method: "GET",
      path: "/v1/withdraw/:transactionId",
      access: "merchant",
      scopes: SCOPES.readWithdrawals,
      handler: async (ctx) => {
        const transactionId = ctx.params.transactionId ?? "";
        const res = await callAboutTransaction(deps.payouts.getWithdrawal({ merchantId: authenticatedMerchantId(ctx), key: { case: "withdrawalId", value: transactionId } }), {
          fields: WITHDRAWAL_FIELDS,
          idField: "withdrawal_id",
          noun: "withdrawal",
        });
        answer(ctx, 200, res);
      },
    },
    {
      method: "POST",
      path: "/v1/withdraw/:transactionId/cancel",
      access: "merchant",
      scopes: SCOPES.withdrawals,
      body: "none",
      handler: async (ctx) => {
        const transactionId = ctx.params.transactionId ?? "";
        // A repeated cancel answers 200 with the withdrawal unchanged; once processing it is 409 INVALID_TRANSACTION_STATE.
        const res = await callAboutTransaction(deps.payouts.cancelWithdrawal({ merchantId: authenticatedMerchantId(ctx), withdrawalId: transactionId }), { fields: WITHDRAWAL_FIELDS, idField: "withdrawal_id", noun: "withdrawal" });
        answer(ctx, 200, res);
      },
    },
    {
      method: "GET",
      path: "/v1/balance",
      access: "merchant",
      // A payouts key reads what it may pay out, as the payout service's table allows.
      scopes: SCOPES.readWithdrawals,
      handler: async (ctx) => {
        const res = await callService(deps.payouts.getBalances({ merchantId: authenticatedMerchantId(ctx) }));
        ctx.body = success({ balances: res.balances.map(balanceRecord) }, deps.clock);
      },
    },
  ];
}
