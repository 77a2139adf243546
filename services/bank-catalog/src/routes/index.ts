import type { ConnectRouter } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import type { BankCatalogContext } from "../context.js";
import { clearMerchantLimit } from "./clear-merchant-limit.js";
import { createBank } from "./create-bank.js";
import { createReceivingAccount } from "./create-receiving-account.js";
import { getDepositTerms } from "./get-deposit-terms.js";
import { getFastSettings } from "./get-fast-settings.js";
import { listAvailableBanks } from "./list-available-banks.js";
import { listBanks } from "./list-banks.js";
import { listMerchantLimits } from "./list-merchant-limits.js";
import { listReceivingAccounts } from "./list-receiving-accounts.js";
import { seedSandboxAccounts } from "./seed-sandbox-accounts.js";
import { setMerchantLimit } from "./set-merchant-limit.js";
import { updateBank } from "./update-bank.js";
import { updateFastSettings } from "./update-fast-settings.js";
import { updateReceivingAccount } from "./update-receiving-account.js";

export function routes(router: ConnectRouter, ctx: BankCatalogContext): void {
  router.service(BankCatalogService, {
    ...listAvailableBanks(ctx),
    ...listBanks(ctx),
    ...createBank(ctx),
    ...updateBank(ctx),
    ...getFastSettings(ctx),
    ...updateFastSettings(ctx),
    ...setMerchantLimit(ctx),
    ...clearMerchantLimit(ctx),
    ...listMerchantLimits(ctx),
    ...listReceivingAccounts(ctx),
    ...createReceivingAccount(ctx),
    ...updateReceivingAccount(ctx),
    ...getDepositTerms(ctx),
    ...seedSandboxAccounts(ctx),
  });
}
