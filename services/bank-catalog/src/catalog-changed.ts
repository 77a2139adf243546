import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { CATALOG_CHANGED_TOPIC } from "@payments/contracts";
import { CatalogChangedSchema } from "@payments/contracts/bank-catalog";
import { recordEvent, type Clock } from "@payments/kit";
import type { Knex } from "knex";
import type { BankCatalogContext } from "./context.js";

/** The `what` of a CatalogChanged event: which mutation made it. */
export type CatalogChange =
  | "bank_created"
  | "bank_updated"
  | "fast_settings_updated"
  | "merchant_limit_set"
  | "merchant_limit_cleared"
  | "receiving_account_created"
  | "receiving_account_updated"
  | "sandbox_accounts_seeded";

/** Writes the CatalogChanged event in the mutation's own transaction: it exists exactly when the change does. */
export async function recordCatalogChanged(trx: Knex.Transaction, clock: Clock, what: CatalogChange): Promise<void> {
  await recordEvent(trx, clock, CATALOG_CHANGED_TOPIC, CatalogChangedSchema, { what, occurredAt: timestampFromMs(clock.now().getTime()) });
}

/** After a change committed: this replica's snapshot goes at once (read-your-writes), the event soon after to everyone else. */
export function catalogChangeCommitted(ctx: Pick<BankCatalogContext, "catalog" | "outbox">): void {
  ctx.catalog.clear();
  ctx.outbox.nudge();
}

/**
 * One catalog mutation: `change` runs in a transaction and says whether it changed anything;
 * when it did, the CatalogChanged event is recorded in the same transaction, and after the
 * commit the snapshot is dropped and the outbox nudged. A mutation that fails (rolls back)
 * or changes nothing records no event.
 */
export async function changeCatalog<T>(
  ctx: BankCatalogContext,
  what: CatalogChange,
  change: (trx: Knex.Transaction) => Promise<{ result: T; changed: boolean }>,
): Promise<T> {
  const { result, changed } = await ctx.db.transaction(async (trx) => {
    const outcome = await change(trx);
    if (outcome.changed) await recordCatalogChanged(trx, ctx.clock, what);
    return outcome;
  });
  if (changed) catalogChangeCommitted(ctx);
  return result;
}
