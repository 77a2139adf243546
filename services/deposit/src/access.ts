import { DepositService } from "@payments/contracts/deposit";
import { formatMajor } from "@payments/kit";
import { ANY_MERCHANT_ROLE, defineAccess, type ServiceAccess } from "@payments/access";
import type { DepositContext } from "./context.js";
import { isSandboxAccount } from "./account-kind.js";
import { findDepositRow } from "./store.js";
import { parseConfirmDeposit } from "./routes/confirm-deposit.js";
import { parseResolveTransfer } from "./routes/resolve-transfer.js";

interface TransferFacts {
  amount: number;
  currency: string;
  iban: string;
  deposit_id: string | null;
}

/**
 * Who may call each RPC (README, "Operators: roles and approvals", and "Workload identities").
 * The gateway creates, reads and cancels deposits for a merchant (its API key's scopes) and runs
 * the sandbox helpers, and reads a checkout by its token for the customer's page; a bank
 * integration reports transfers and imports statements (as an operator may); the merchant
 * service raises the mode fence. Deciding what money is, is an operator's; sending it back,
 * finance's. Live money moved by hand above APPROVAL_THRESHOLD, and every live return, needs a
 * second operator.
 */
export function depositAccess(ctx: DepositContext): ServiceAccess[] {
  const threshold = ctx.config.APPROVAL_THRESHOLD;
  const transfer = async (id: string) =>
    ctx.db("incoming_transfers").where({ id }).first<TransferFacts | undefined>("amount", "currency", "iban", "deposit_id");
  const money = (amount: number, currency: string) => formatMajor(amount, currency);
  const deposits = { scopes: ["deposits"] } as const;
  const reads = { scopes: ["read", "deposits"] } as const;
  return [
    defineAccess(DepositService, {
      createDeposit: { role: "admin", apiKey: deposits },
      getDeposit: { role: "viewer", apiKey: reads, merchant: { roles: ANY_MERCHANT_ROLE } },
      listDeposits: { role: "viewer", apiKey: reads, merchant: { roles: ANY_MERCHANT_ROLE } },
      summarizeDeposits: { role: "viewer", merchant: { roles: ANY_MERCHANT_ROLE } },
      cancelDeposit: { role: "operator", apiKey: deposits, merchant: { roles: ["owner", "developer"] } },
      confirmDeposit: {
        role: "operator",
        before: (req) => findDepositRow(ctx.db, { depositId: req.depositId }),
        validate: parseConfirmDeposit,
        async approval(req) {
          const deposit = await findDepositRow(ctx.db, { depositId: req.depositId });
          if (!deposit || deposit.sandbox) return undefined;
          const amount = req.amount !== undefined ? Number(req.amount) : Number(deposit.amount);
          if (amount <= threshold) return undefined;
          return { summary: `confirm live deposit ${deposit.id} of merchant ${deposit.merchant_id} with ${money(amount, deposit.currency)}` };
        },
      },
      rejectDeposit: { role: "operator", reason: (req) => req.reason },
      reportTransfer: { role: "operator", workloads: ["bank-integration"] },
      listUnmatchedTransfers: { role: "viewer" },
      // The checkout page's own calls, by the deposit's token (the customer's link): the gateway alone.
      getCheckout: { role: "viewer", workloads: ["gateway"] },
      simulatePayment: { role: "operator", workloads: ["gateway"] },
      sandboxPayDeposit: { role: "operator", apiKey: deposits, merchant: { roles: ["owner", "developer"] } },
      sandboxExpireDeposit: { role: "operator", apiKey: deposits, merchant: { roles: ["owner", "developer"] } },
      getTransfer: { role: "viewer" },
      resolveTransfer: {
        role: "operator",
        roleFor: (req) => (req.decision.case === "return" ? "finance" : "operator"),
        reason: (req) => req.reason,
        targets: (req) => [req.transferId, req.decision.case === "matchDepositId" ? req.decision.value : undefined],
        before: (req) => transfer(req.transferId),
        validate: parseResolveTransfer,
        async approval(req) {
          const decision = req.decision.case;
          if (decision !== "return" && decision !== "matchDepositId" && decision !== "complete") return undefined;
          const found = await transfer(req.transferId);
          if (!found || (await isSandboxAccount(ctx, found.iban))) return undefined;
          const amount = money(Number(found.amount), found.currency);
          if (decision === "return") return { summary: `return live transfer ${req.transferId} of ${amount} to its sender` };
          if (Number(found.amount) <= threshold) return undefined;
          const to = decision === "matchDepositId" ? `match live transfer ${req.transferId} of ${amount} to deposit ${req.decision.value}` : `complete the deposit of live transfer ${req.transferId} of ${amount}`;
          return { summary: to };
        },
      },
      importStatement: { role: "finance", workloads: ["bank-integration"] },
      getReconciliation: { role: "finance" },
      // Only the merchant service, on a sandbox/live switch it is making.
      raiseModeFence: { workloads: ["merchant"] },
      lowerModeFence: { workloads: ["merchant"] },
    }),
  ];
}
