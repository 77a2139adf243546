import { MerchantService } from "@payments/contracts/merchant";
import { ANY_MERCHANT_ROLE, defineAccess, type MerchantRole, type ServiceAccess } from "@payments/access";
import { canWithdraw, WITHDRAWAL_KEY_HOLDERS } from "./api-key-rules.js";
import { findApiKey } from "./api-keys.js";
import type { MerchantContext } from "./context.js";
import { findMerchant } from "./store.js";
import { parseSetSandbox } from "./routes/set-sandbox.js";
import { parseCreateMerchant } from "./routes/create-merchant.js";
import { requireCallableCallbackUrl } from "./callback-url-policy.js";

/**
 * Who may call each RPC (README, "Operators: roles and approvals", and "Workload identities").
 * Merchants are an admin's business, and a live one is made by two admins. The deposit and payout
 * services read a merchant; a merchant's secrets are read by the one workload that needs them
 * (the gateway the API secrets that verify requests, the callback-sender the ones that sign
 * callbacks), every read audited, and by nobody else: not an operator, not a merchant's user.
 *
 * API keys: a merchant's owner and finance users hold keys of any scopes, its developers only
 * keys that cannot withdraw (the rule below for a new key's scopes, and the handlers for a key
 * that exists, whose scopes only the database knows: api-keys.ts requireMayHold); every role
 * reads the list (a key's id is no secret). Trusting a key for automatic payouts is the owner's.
 */
export function merchantAccess(ctx: MerchantContext): ServiceAccess[] {
  const admin = { role: "admin" } as const;
  // A merchant's integration (webhook, IPs, callback URL) is its owner's and its developers'.
  const integration = { roles: ["owner", "developer"] } as const;
  // Its API keys: finance users hold the keys that pay out (the handlers keep developers to the others).
  const keyHolders: readonly MerchantRole[] = ["owner", "developer", "finance"];
  const aboutKey = (req: { merchantId: string; apiKey: string }) => [req.merchantId, req.apiKey];
  return [
    defineAccess(MerchantService, {
      createMerchant: {
        ...admin,
        // The handler's own checks (the schema, then whether the callback URL may be called), before a second admin is asked.
        validate: async (req) => requireCallableCallbackUrl(ctx, parseCreateMerchant(req).callbackUrl),
        // A live merchant takes real money from its first deposit: a second admin agrees, as for a switch to live.
        approval: (req) => Promise.resolve(req.sandbox ? undefined : { summary: `create live merchant ${req.name.trim()}` }),
      },
      getMerchant: { role: "viewer", workloads: ["deposit", "payout"], merchant: { roles: ANY_MERCHANT_ROLE } },
      listMerchants: { role: "viewer" },
      rotateSecret: { ...admin, merchant: { roles: keyHolders }, targets: aboutKey },
      revokeSecret: { ...admin, merchant: { roles: keyHolders } },
      createApiKey: {
        ...admin,
        merchant: { roles: keyHolders, rolesFor: (req) => (canWithdraw(req.scopes) ? WITHDRAWAL_KEY_HOLDERS : keyHolders) },
      },
      listApiKeys: { role: "viewer", merchant: { roles: ANY_MERCHANT_ROLE } },
      revokeApiKey: { ...admin, merchant: { roles: keyHolders }, targets: aboutKey, before: (req) => findApiKey(ctx.db, req.merchantId, req.apiKey) },
      setApiKeyTrusted: {
        ...admin,
        merchant: { roles: ["owner"] },
        targets: aboutKey,
        // The audit keeps the key as it was, beside the request that changed its mark.
        before: (req) => findApiKey(ctx.db, req.merchantId, req.apiKey),
      },
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
      getCredentials: { workloads: ["gateway"], audit: "always" },
      getCallbackTarget: { workloads: ["callback-sender"], audit: "always" },
    }),
  ];
}
