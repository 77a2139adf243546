import type { DepositService } from "@payments/contracts/deposit";
import { claimTransaction, merchantScope, merchantScopeFields, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { expireDeposit } from "../expiry.js";
import { depositId } from "../requests.js";
import { requireSandbox } from "../sandbox.js";
import { depositFromRow, getDepositRow } from "../store.js";

const request = z.object({ ...merchantScopeFields, depositId });

/**
 * POST /v1/sandbox/deposit/{id}/expire: a sandbox merchant's CI sees its expiry handling
 * without waiting 30 minutes. The move is the expiry job's own (expireDeposit: lock, decide,
 * conditional update and outbox event in one transaction), so the `deposit.expired` callback
 * is the one a real expiry sends. A deposit that is no longer pending is refused
 * (INVALID_TRANSACTION_STATE), never expired twice.
 */
export function sandboxExpireDeposit(ctx: DepositContext): Rpc<typeof DepositService, "sandboxExpireDeposit"> {
  return {
    async sandboxExpireDeposit(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      // The sandbox flag of a deposit never changes, so reading it before the move's lock is safe.
      const row = await getDepositRow(ctx.db, { depositId: input.depositId, merchantId });
      await requireSandbox(ctx, row);
      const result = await claimTransaction(ctx.db, (trx) => expireDeposit(trx, ctx.clock, row.id));
      ctx.outbox.nudge();
      ctx.logger.info({ depositId: row.id }, "sandbox deposit expired by the merchant's expire helper");
      return { deposit: depositFromRow(result.row) };
    },
  };
}
