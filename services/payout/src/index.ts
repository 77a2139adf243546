import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import type { BaseContext, ServiceModule, Stoppable } from "@payments/kit";
import { migrations } from "../migrations/index.js";
import type { BankConnector } from "./bank-connector.js";
import { loadPayoutConfig, type PayoutContext } from "./context.js";
import { startDepositCredits } from "./deposit-credits.js";
import { routes } from "./routes/index.js";
import { createSandboxConnector } from "./sandbox-connector.js";
import { startPayoutWorker } from "./worker.js";

export interface PayoutModuleOptions {
  /** The bank connector; default the sandbox connector (SANDBOX_PAYOUT_DELAY). */
  connector?: BankConnector;
}

/** Withdrawals, balances and the ledger, the deposit-credit consumer and the payout worker. */
export function createPayoutModule(options: PayoutModuleOptions = {}): ServiceModule<PayoutContext> {
  return {
    name: "payout",
    services: [PayoutService],
    migrations,
    createContext(base: BaseContext): PayoutContext {
      const config = loadPayoutConfig(base.env);
      return {
        ...base,
        config,
        bankCatalog: base.client(BankCatalogService, "bank-catalog"),
        merchants: base.client(MerchantService, "merchant"),
        connector: options.connector ?? createSandboxConnector({ delayMs: config.SANDBOX_PAYOUT_DELAY }),
      };
    },
    routes,
    async start(ctx) {
      const jobs: Stoppable[] = [await startDepositCredits(ctx)];
      if (ctx.config.PAYOUT_WORKER) jobs.push(startPayoutWorker(ctx));
      return jobs;
    },
  };
}

export const payoutModule = createPayoutModule();

export type { BankConnector, PayoutInstruction, PayoutResult } from "./bank-connector.js";
export { loadPayoutConfig, payoutConfigSchema, type PayoutConfig, type PayoutContext } from "./context.js";
export { creditDeposit, DEPOSIT_COMPLETED_TOPIC } from "./deposit-credits.js";
export { SANDBOX_OUTCOMES, createSandboxConnector } from "./sandbox-connector.js";
export { WITHDRAWAL_TOPICS, withdrawalTopic } from "./withdrawal-moves.js";
export { migrations } from "../migrations/index.js";
export { startPayoutWorker } from "./worker.js";
