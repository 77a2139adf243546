import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { PayoutService } from "@payments/contracts/payout";
import type { PayoutContext } from "../context.js";
import { adjustBalance } from "./adjust-balance.js";
import { cancelWithdrawal } from "./cancel-withdrawal.js";
import { completeWithdrawal } from "./complete-withdrawal.js";
import { createWithdrawal } from "./create-withdrawal.js";
import { failWithdrawal } from "./fail-withdrawal.js";
import { getBalances } from "./get-balances.js";
import { getWithdrawal } from "./get-withdrawal.js";
import { listLedgerEntries } from "./list-ledger-entries.js";
import { listWithdrawals } from "./list-withdrawals.js";

/** One RPC of PayoutService, as each route file provides it. */
export type Rpc<K extends keyof ServiceImpl<typeof PayoutService>> = Pick<ServiceImpl<typeof PayoutService>, K>;

export function routes(router: ConnectRouter, ctx: PayoutContext): void {
  router.service(PayoutService, {
    ...createWithdrawal(ctx),
    ...getWithdrawal(ctx),
    ...listWithdrawals(ctx),
    ...cancelWithdrawal(ctx),
    ...completeWithdrawal(ctx),
    ...failWithdrawal(ctx),
    ...getBalances(ctx),
    ...listLedgerEntries(ctx),
    ...adjustBalance(ctx),
  });
}
