import type { Migration } from "@payments/kit";
import { depositsMigration } from "./20261122030000_deposits.js";
import { reconciliationMigration } from "./20261124010000_reconciliation.js";
import { transferReturnAttemptsMigration } from "./20261126000000_transfer_return_attempts.js";
import { returnUrlMigration } from "./20261127000000_return_url.js";
import { modeFencesMigration } from "./20261128000000_mode_fences.js";
import { listFiltersMigration } from "./20261129000000_list_filters.js";
import { merchantNameSearchMigration } from "./20261217000000_merchant_name_search.js";
import { attributionMigration } from "./20261223000000_attribution.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [depositsMigration, reconciliationMigration, transferReturnAttemptsMigration, returnUrlMigration, modeFencesMigration, listFiltersMigration, merchantNameSearchMigration, attributionMigration];
