import type { DepositContext } from "./context.js";

/**
 * Whether money that arrived on `iban` is sandbox money: the bank catalog says so for its
 * sandbox accounts. Anything else (a live account, or one the catalog no longer lists) is
 * treated as live: live money is never taken for sandbox money, so a return of it goes to the
 * live connector and a sandbox transfer can never pay a live deposit. Asked only for an
 * operator's decision, never on the path of an incoming transfer.
 */
export async function isSandboxAccount(ctx: DepositContext, iban: string): Promise<boolean> {
  const { accounts } = await ctx.bankCatalog.listReceivingAccounts({ sandbox: true });
  return accounts.some((account) => account.iban === iban);
}
