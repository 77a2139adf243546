import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import type { Rpc } from "@payments/kit";
import { catalogChangeCommitted } from "../catalog-changed.js";
import { getAccountRow, receivingAccountMessage } from "../store.js";
import type { BankCatalogContext } from "../context.js";
import { seedSandboxAccounts as seedAccounts } from "../seed.js";

/** An operator's explicit request for the made-up sandbox accounts (never a migration's). */
export function seedSandboxAccounts(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "seedSandboxAccounts"> {
  return {
    async seedSandboxAccounts() {
      // Adds and records its CatalogChanged event in one transaction.
      const ids = await seedAccounts(ctx.db, ctx.clock.now().getTime());
      if (ids.length > 0) {
        catalogChangeCommitted(ctx);
        ctx.logger.info({ added: ids.length }, "sandbox receiving accounts seeded");
      }
      const rows = await Promise.all(ids.map((id) => getAccountRow(ctx.db, id)));
      return { added: rows.map((row) => receivingAccountMessage(row, row.bank_name)) };
    },
  };
}
