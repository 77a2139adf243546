import type { MerchantService } from "@payments/contracts/merchant";
import { newToken, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { raiseModeFences, sandboxChangeRefused, sandboxChangeTimedOut } from "../merchant-activity.js";
import { changeMerchant, findMerchant, merchantNotFound } from "../store.js";

const setSandboxInput = z.object({ merchantId: merchantIdInput, sandbox: z.boolean() });

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseSetSandbox(req: unknown): z.infer<typeof setSandboxInput> {
  return parseRequest(setSandboxInput, req);
}

/**
 * A switch between sandbox and live, fenced (README, "Switching between sandbox and live"):
 * 1. raise the merchant's mode fence at the deposit and payout services: from then on they
 *    refuse its deposits and withdrawals (MERCHANT_MODE_CHANGING), and each says, in the
 *    transaction that raised it, whether the merchant has transactions there;
 * 2. refused if any has (or a peer cannot be reached); otherwise flip the flag, in a
 *    transaction that checks, after locking the merchant's row, that the fences still stand
 *    (the deadline, well before they expire);
 * 3. lower the fences, recording the kind the merchant now has (whatever happened).
 */
export function setSandbox(ctx: MerchantContext): Rpc<typeof MerchantService, "setSandbox"> {
  return {
    async setSandbox(req) {
      const { merchantId, sandbox } = parseSetSandbox(req);
      const current = await findMerchant(ctx.db, merchantId);
      if (!current) throw merchantNotFound(merchantId);
      if (current.sandbox === sandbox) return { merchant: await changeMerchant(ctx, merchantId, "sandbox", { sandbox }) };

      const fences = await raiseModeFences(ctx.activity, { merchantId, fenceId: `fence_${newToken(16)}`, sandbox: current.sandbox, now: ctx.clock.now().getTime() }, ctx.logger);
      if (fences.blocker) {
        await fences.lower(current.sandbox);
        throw sandboxChangeRefused(merchantId, fences.blocker);
      }
      let kind: boolean | undefined;
      try {
        const merchant = await changeMerchant(ctx, merchantId, "sandbox", { sandbox }, async () => {
          if (ctx.clock.now().getTime() >= fences.deadline) throw sandboxChangeTimedOut(merchantId);
        });
        kind = merchant.sandbox;
        return { merchant };
      } catch (err) {
        // The flip failed, or its outcome is unknown (a commit whose answer was lost): the
        // fences record the kind the merchant really has. Unreadable: they are left to expire,
        // and the peers then ask the merchant service afresh.
        kind = await findMerchant(ctx.db, merchantId).then(
          (m) => m?.sandbox,
          () => undefined,
        );
        throw err;
      } finally {
        if (kind !== undefined) await fences.lower(kind);
      }
    },
  };
}
