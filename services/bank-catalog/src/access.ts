import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { ANY_API_KEY, ANY_MERCHANT_ROLE, defineAccess, type ServiceAccess } from "@payments/access";
import type { BankCatalogContext } from "./context.js";
import { getAccountRow } from "./store.js";
import { parseCreateReceivingAccount } from "./routes/create-receiving-account.js";
import { parseUpdateReceivingAccount } from "./routes/update-receiving-account.js";

/**
 * Who may call each RPC (README, "Operators: roles and approvals", and "Workload identities"):
 * the gateway reads a merchant's bank list for the merchant (any API key) and the banks for
 * their logos; the deposit service reads accounts and terms, the payout service the banks;
 * changing any of it is an admin's. A live receiving account added or made active again (where
 * customers' real money will be sent) needs a second admin.
 */
export function bankCatalogAccess(ctx: BankCatalogContext): ServiceAccess[] {
  const admin = { role: "admin" } as const;
  return [
    defineAccess(BankCatalogService, {
      listAvailableBanks: { role: "viewer", apiKey: ANY_API_KEY, merchant: { roles: ANY_MERCHANT_ROLE } },
      listBanks: { role: "viewer", workloads: ["gateway", "payout"], merchant: { roles: ANY_MERCHANT_ROLE, scope: () => true } },
      createBank: admin,
      updateBank: admin,
      getFastSettings: { role: "viewer" },
      updateFastSettings: admin,
      setMerchantLimit: admin,
      clearMerchantLimit: admin,
      listMerchantLimits: { role: "viewer" },
      listReceivingAccounts: { role: "viewer", workloads: ["deposit"] },
      createReceivingAccount: {
        ...admin,
        validate: parseCreateReceivingAccount,
        approval: (req) =>
          Promise.resolve(!req.sandbox && req.active !== false ? { summary: `add live receiving account ${req.iban} (${req.accountName}) at bank ${req.bankId}` } : undefined),
      },
      updateReceivingAccount: {
        ...admin,
        validate: parseUpdateReceivingAccount,
        before: (req) => getAccountRow(ctx.db, req.accountId).catch(() => undefined),
        async approval(req) {
          if (req.active !== true) return undefined;
          const account = await getAccountRow(ctx.db, req.accountId).catch(() => undefined);
          if (!account || account.sandbox || account.active) return undefined;
          return { summary: `re-activate live receiving account ${account.iban} (${account.account_name})` };
        },
      },
      // The all-in-one's start adds the made-up sandbox accounts; never live ones.
      seedSandboxAccounts: admin,
      getDepositTerms: { role: "viewer", workloads: ["deposit"] },
    }),
  ];
}
