import { Code, type Client } from "@connectrpc/connect";
import type { DepositService } from "@payments/contracts/deposit";
import type { PayoutService } from "@payments/contracts/payout";
import { serviceError } from "@payments/kit";

/** The services that know whether a merchant has moved money. */
export interface ActivitySources {
  deposits(): Client<typeof DepositService>;
  payouts(): Client<typeof PayoutService>;
}

/**
 * Why a merchant's sandbox flag may not change now, or undefined when it may: a merchant
 * that has any deposit or withdrawal, or any balance that is not zero, keeps its kind, so
 * simulated money can never become live money and live money never sandbox money. The three
 * questions go out together.
 */
export async function sandboxChangeBlocker(sources: ActivitySources, merchantId: string): Promise<string | undefined> {
  const [deposits, withdrawals, balances] = await Promise.all([
    sources.deposits().listDeposits({ merchantId, limit: 1 }),
    sources.payouts().listWithdrawals({ merchantId, limit: 1 }),
    sources.payouts().getBalances({ merchantId }),
  ]);
  if (deposits.deposits.length > 0) return "the merchant has deposits";
  if (withdrawals.withdrawals.length > 0) return "the merchant has withdrawals";
  const nonZero = balances.balances.filter((b) => b.available !== 0n || b.held !== 0n).map((b) => b.currency);
  if (nonZero.length > 0) return `the merchant's ${nonZero.join(", ")} balance is not zero`;
  return undefined;
}

export function sandboxChangeRefused(merchantId: string, blocker: string) {
  return serviceError(
    Code.FailedPrecondition,
    "SANDBOX_CHANGE_REFUSED",
    `merchant ${merchantId} cannot switch between sandbox and live: ${blocker}; a merchant's kind can change only while it has no transactions and every balance is zero (create a new merchant instead)`,
  );
}
