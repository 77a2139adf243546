import { DepositService } from "@payments/contracts/deposit";
import type { ServiceModule } from "@payments/kit";
import { migrations } from "./migrations/index.js";
import { startBankFeedDirJob } from "./bank-feed/dir.js";
import { bankFeedRoutes } from "./bank-feed/http.js";
import { createDepositContext, type DepositContext } from "./context.js";
import { watchCatalogChanges } from "./deposit-terms.js";
import { startExpiryJob } from "./expiry.js";
import { routes } from "./routes/index.js";
import { startTransferReturnSettlement } from "./transfer-returns.js";
import { depositAccess } from "./access.js";

/** Deposits: creation, checkout, matching incoming transfers, operator decisions and expiry. */
export const depositModule: ServiceModule<DepositContext> = {
  name: "deposit",
  services: [DepositService],
  migrations,
  createContext: createDepositContext,
  routes,
  access: depositAccess,
  http: bankFeedRoutes,
  // Bank reports and decisions read without locks and lock only what they change (transfers.ts);
  // reconcile asks for its one snapshot.
  readCommitted: true,
  start: async (ctx) => [await ctx.merchantCache.watchMerchantChanges(ctx.bus), await watchCatalogChanges(ctx), startExpiryJob(ctx), ...(await startTransferReturnSettlement(ctx)), ...[startBankFeedDirJob(ctx)].filter((job) => job !== undefined)],
};

export { depositConfigSchema, loadDepositConfig, type DepositConfig, type DepositContext } from "./context.js";
export { DEPOSIT_TOPICS, depositTopic } from "./deposit-moves.js";
export { expireDueDeposits } from "./expiry.js";
export { migrations } from "./migrations/index.js";
