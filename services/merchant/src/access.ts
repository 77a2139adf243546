import { MerchantService } from "@payments/contracts/merchant";
import { ANY_MERCHANT_ROLE, defineAccess, type ServiceAccess } from "@payments/access";
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
  // A merchant's integration (keys, webhook, IPs) is its owner's and its developers'.
  const integration = { roles: ["owner", "developer"] } as const;
  return [
    defineAccess(MerchantService, {
      createMerchant: { role: "admin" },
      getMerchant: { role: "viewer", system: true, merchant: { roles: ANY_MERCHANT_ROLE } },
      listMerchants: { role: "viewer" },
      rotateSecret: { ...admin, merchant: integration },
      revokeSecret: { ...admin, merchant: { roles: ["owner", "developer"] } },
      rotateWebhookSecret: { ...admin, merchant: integration },
      setAllowedIps: { ...admin, merchant: integration },
      setCallbackUrl: { ...admin, merchant: integration },
      setDisplayName: { ...admin, merchant: { roles: ["owner"] } },
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
      setWithdrawalApproval: { ...admin, merchant: { roles: ["owner"] } },
      getCredentials: { role: "admin", system: true },
      getCallbackTarget: { role: "admin", system: true },
    }),
  ];
}
