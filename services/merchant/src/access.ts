import { MerchantService } from "@payments/contracts/merchant";
import { defineAccess, type ServiceAccess } from "@payments/kit";
import type { MerchantContext } from "./context.js";
import { findMerchant } from "./store.js";
import { parseSetSandbox } from "./routes/set-sandbox.js";

/**
 * Who may call each RPC (README, "Operators: roles and approvals"). Merchants are an admin's
 * business; the gateway and the other services read what they need without an operator.
 * Reading a merchant's secrets (credentials, callback target) is for those internal callers.
 */
export function merchantAccess(ctx: MerchantContext): ServiceAccess[] {
  const admin = { role: "admin" } as const;
  return [
    defineAccess(MerchantService, {
      createMerchant: { role: "admin" },
      getMerchant: { role: "viewer", system: true },
      listMerchants: { role: "viewer" },
      rotateSecret: admin,
      revokeSecret: admin,
      rotateWebhookSecret: admin,
      setAllowedIps: admin,
      setCallbackUrl: admin,
      setDisplayName: admin,
      setStatus: admin,
      setSandbox: {
        ...admin,
        before: (req) => findMerchant(ctx.db, req.merchantId),
        validate: parseSetSandbox,
        // A switch to live makes the merchant's payments real money: a second admin agrees.
        async approval(req) {
          if (req.sandbox) return undefined;
          const current = await findMerchant(ctx.db, req.merchantId);
          if (!current?.sandbox) return undefined;
          return { summary: `switch merchant ${req.merchantId} (${current.name}) from sandbox to live` };
        },
      },
      setRateLimit: admin,
      setPaymentRules: admin,
      setWithdrawalApproval: admin,
      getCredentials: { role: "admin", system: true },
      getCallbackTarget: { role: "admin", system: true },
    }),
  ];
}
