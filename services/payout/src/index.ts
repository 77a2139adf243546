import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import type { BaseContext, ServiceModule, Stoppable } from "@payments/kit";
import { migrations } from "./migrations/index.js";
import type { BankConnector } from "./bank-connector.js";
import { loadPayoutConfig, type LiveConnectorName, type PayoutContext } from "./context.js";
import { startDepositCredits } from "./deposit-credits.js";
import { createManualConnector } from "./manual-connector.js";
import { createMerchantCache } from "./merchants.js";
import { createBankIdsCache, watchCatalogChanges } from "./bank-list.js";
import { routes } from "./routes/index.js";
import { createSandboxConnector } from "./sandbox-connector.js";
import { startTransferReturnRequests } from "./transfer-return-requests.js";
import { startPayoutWorker } from "./worker.js";
import { payoutAccess } from "./access.js";
import { startApprovalExpiryJob } from "./withdrawal-approval-moves.js";

export interface PayoutModuleOptions {
  /** Sandbox merchants' withdrawals; default the sandbox connector (SANDBOX_PAYOUT_DELAY). */
  sandboxConnector?: BankConnector;
  /** Live merchants' withdrawals; default the one PAYOUT_CONNECTOR names (manual). */
  liveConnector?: BankConnector;
}

const LIVE: Readonly<Record<LiveConnectorName, () => BankConnector>> = {
  manual: createManualConnector,
};

/** Withdrawals, balances and the ledger, the deposit-credit consumer and the payout worker. */
export function createPayoutModule(options: PayoutModuleOptions = {}): ServiceModule<PayoutContext> {
  return {
    name: "payout",
    services: [PayoutService],
    migrations,
    createContext(base: BaseContext): PayoutContext {
      const config = loadPayoutConfig(base.env);
      const live = options.liveConnector ?? LIVE[config.PAYOUT_CONNECTOR]();
      // A plugged-in connector too: live money never goes through the simulator.
      if (live.name === "sandbox") throw new Error("the sandbox connector cannot be the live connector: live money never goes through the simulator");
      base.logger.info({ liveConnector: live.name }, "live merchants' withdrawals go to this connector; sandbox merchants' to the sandbox connector");
      return {
        ...base,
        config,
        bankCatalog: base.client(BankCatalogService, "bank-catalog"),
        merchants: base.client(MerchantService, "merchant"),
        merchantCache: createMerchantCache(base, config.MERCHANT_CACHE_TTL),
        bankIdsCache: createBankIdsCache(base, config.CATALOG_CACHE_TTL),
        connectors: {
          sandbox: options.sandboxConnector ?? createSandboxConnector({ delayMs: config.SANDBOX_PAYOUT_DELAY }),
          live,
        },
      };
    },
    routes,
    access: payoutAccess,
    async start(ctx) {
      // The watch first: the credit consumer may look a merchant up at once.
      const jobs: Stoppable[] = [await ctx.merchantCache.watchMerchantChanges(ctx.bus), await watchCatalogChanges(ctx), await startDepositCredits(ctx), await startTransferReturnRequests(ctx)];
      // Every replica, worker or not: an approval nobody decided must end, its money released.
      jobs.push(startApprovalExpiryJob(ctx));
      if (ctx.config.PAYOUT_WORKER) jobs.push(startPayoutWorker(ctx));
      return jobs;
    },
  };
}

export const payoutModule = createPayoutModule();

export type { BankConnector, PayoutInstruction, PayoutResult } from "./bank-connector.js";
export { LIVE_CONNECTORS, loadPayoutConfig, payoutConfigSchema, type LiveConnectorName, type PayoutConfig, type PayoutConnectors, type PayoutContext } from "./context.js";
export { creditDeposit, DEPOSIT_COMPLETED_TOPIC } from "./deposit-credits.js";
export { createManualConnector } from "./manual-connector.js";
export { SANDBOX_OUTCOMES, createSandboxConnector } from "./sandbox-connector.js";
export { WITHDRAWAL_TOPICS, withdrawalTopic } from "./withdrawal-moves.js";
export { migrations } from "./migrations/index.js";
export { startPayoutWorker } from "./worker.js";
export { expireWithdrawalApprovals } from "./withdrawal-approval-moves.js";
