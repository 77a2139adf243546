import { PayoutService } from "@payments/contracts/payout";
import { formatMajor } from "@payments/kit";
import { ANY_MERCHANT_ROLE, defineAccess, type ServiceAccess } from "@payments/access";
import type { PayoutContext } from "./context.js";
import { requireMerchant } from "./merchants.js";
import { getWithheldCreditRow } from "./withheld-credits.js";
import { parseAdjustBalance } from "./routes/adjust-balance.js";
import { parseCreateWithdrawal } from "./routes/create-withdrawal.js";
import { parseCreateTransferReturn } from "./routes/create-transfer-return.js";
import { parseResolveWithheldCredit } from "./routes/resolve-withheld-credit.js";

/**
 * Who may call each RPC (README, "Operators: roles and approvals", and "Workload identities").
 * An API key's withdrawal above the merchant's threshold waits for a person of the merchant
 * (approveWithdrawal, rejectWithdrawal), unless its owner trusted the key for automatic payouts.
 * The gateway creates, reads and cancels withdrawals and reads balances and statements for a
 * merchant (its API key's scopes); a person creates a withdrawal only through the console (an
 * operator) or the merchant dashboard (a merchant's user); the merchant service raises the mode
 * fence. Completing or failing a
 * withdrawal by hand is an operator's; balances, returns, statements and reconciliation are
 * finance's. Live money moved by hand (an adjustment, a return, crediting withheld money) needs
 * a second operator; a sandbox merchant's needs one.
 */
export function payoutAccess(ctx: PayoutContext): ServiceAccess[] {
  // A merchant the merchant service does not know is VALIDATION_ERROR on merchant_id, as the handler says.
  const live = async (merchantId: string) => !(await requireMerchant(ctx, merchantId, { fresh: true })).sandbox;
  return [
    defineAccess(PayoutService, {
      createWithdrawal: {
        role: "admin",
        apiKey: { scopes: ["withdrawals"] },
        people: ["console", "merchant-dashboard"],
        validate: (req) => parseCreateWithdrawal(ctx, req),
        merchant: {
          roles: ["owner", "finance"],
          // The merchant's own four-eyes: above the threshold its owner set, a second user of the merchant approves.
          async approval(req, user) {
            const threshold = (await requireMerchant(ctx, user.merchantId, { fresh: true })).withdrawalApprovalThreshold;
            if (threshold === undefined || req.amount <= threshold) return undefined;
            return { summary: `withdraw ${formatMajor(req.amount, req.currency || "TRY")} to ${req.iban} (above the merchant's approval threshold of ${formatMajor(threshold, req.currency || "TRY")})` };
          },
        },
      },
      getWithdrawal: { role: "viewer", apiKey: { scopes: ["read", "withdrawals"] }, merchant: { roles: ANY_MERCHANT_ROLE } },
      listWithdrawals: { role: "viewer", apiKey: { scopes: ["read", "withdrawals"] }, merchant: { roles: ANY_MERCHANT_ROLE } },
      summarizeWithdrawals: { role: "viewer", merchant: { roles: ANY_MERCHANT_ROLE } },
      cancelWithdrawal: { role: "operator", apiKey: { scopes: ["withdrawals"] }, merchant: { roles: ["owner", "finance"] } },
      completeWithdrawal: { role: "operator" },
      failWithdrawal: { role: "operator" },
      getBalances: { role: "viewer", apiKey: { scopes: ["read", "withdrawals"] }, merchant: { roles: ANY_MERCHANT_ROLE } },
      listLedgerEntries: { role: "finance", merchant: { roles: ["owner", "finance"] } },
      getStatement: { role: "finance", apiKey: { scopes: ["read"] }, merchant: { roles: ["owner", "finance"] } },
      adjustBalance: {
        role: "finance",
        reason: (req) => req.reason,
        before: async (req) => ctx.db("balances").where({ merchant_id: req.merchantId }).select(),
        validate: (req) => parseAdjustBalance(ctx, req),
        async approval(req) {
          if (!(await live(req.merchantId))) return undefined;
          return { summary: `adjust the balance of live merchant ${req.merchantId} by ${formatMajor(req.amount, req.currency)}` };
        },
      },
      createTransferReturn: {
        role: "finance",
        reason: (req) => req.reason,
        validate: (req) => parseCreateTransferReturn(ctx, req),
        approval: (req) => Promise.resolve(req.sandbox ? undefined : { summary: `return live transfer ${req.transferId} of ${formatMajor(req.amount, req.currency)} to ${req.iban}` }),
      },
      completeTransferReturn: { role: "finance" },
      failTransferReturn: { role: "finance", reason: (req) => req.reason },
      listTransferReturns: { role: "viewer" },
      checkLedger: { role: "finance" },
      listWithheldCredits: { role: "viewer" },
      resolveWithheldCredit: {
        role: "finance",
        reason: (req) => req.reason,
        validate: parseResolveWithheldCredit,
        // Withheld money waits because its merchant is live now: crediting it makes it real money.
        // One that is not open (decided already, or unknown) is refused by the handler at once.
        async approval(req) {
          if (req.decision.case !== "credit") return undefined;
          const record = await getWithheldCreditRow(ctx.db, req.id).catch(() => undefined);
          if (record?.status !== "open") return undefined;
          return { summary: `credit withheld sandbox money ${req.id} to a live merchant's balance` };
        },
      },
      // Only the merchant service, on a sandbox/live switch it is making.
      raiseModeFence: { workloads: ["merchant"] },
      lowerModeFence: { workloads: ["merchant"] },
      // The merchant's own four-eyes on its API keys' withdrawals (src/withdrawal-approval.ts):
      // its owners and finance users decide; no API key (not even one that can withdraw), no
      // developer or viewer, and none of our operators. Operators may see what waits.
      listWithdrawalApprovals: { role: "viewer", merchant: { roles: ["owner", "finance"] } },
      approveWithdrawal: { merchant: { roles: ["owner", "finance"] } },
      rejectWithdrawal: { merchant: { roles: ["owner", "finance"] }, reason: (req) => req.reason },
    }),
  ];
}
