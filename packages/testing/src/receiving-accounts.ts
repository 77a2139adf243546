import type { Client } from "@connectrpc/connect";
import type { BankCatalogService, ReceivingAccount } from "@payments/contracts/bank-catalog";
import { turkishIban } from "./iban.js";

/**
 * Receiving accounts for a test deployment, which (like any split install) starts with none:
 * the made-up sandbox accounts, and a live twin of each (same bank, FAST flag and name, an
 * account number starting with 7 instead of 5), so both kinds of merchant can take deposits.
 * Returns the live accounts added (none when they were already there).
 */
export async function addTestReceivingAccounts(bankCatalog: Client<typeof BankCatalogService>): Promise<ReceivingAccount[]> {
  await bankCatalog.seedSandboxAccounts({});
  const [{ accounts: sandbox }, { accounts: live }] = await Promise.all([
    bankCatalog.listReceivingAccounts({ bankId: "", sandbox: true }),
    bankCatalog.listReceivingAccounts({ bankId: "", sandbox: false }),
  ]);
  const have = new Set(live.map((a) => a.iban));
  const added: ReceivingAccount[] = [];
  for (const account of sandbox) {
    const bban = account.iban.slice(4);
    const iban = turkishIban(`${bban.slice(0, 6)}7${bban.slice(7)}`);
    if (have.has(iban)) continue;
    const { account: created } = await bankCatalog.createReceivingAccount({
      bankId: account.bankId,
      accountName: account.accountName.replace("Sandbox", "Test Live"),
      iban,
      fastEnabled: account.fastEnabled,
      active: account.active,
      sandbox: false,
    });
    if (created) added.push(created);
  }
  return added;
}
