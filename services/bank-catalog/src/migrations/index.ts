import type { Migration } from "@payments/kit";
import { catalogMigration } from "./20261122020000_catalog.js";
import { seedMigration } from "./20261122020100_seed.js";
import { accountKindMigration } from "./20261123000000_account_kind.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [catalogMigration, seedMigration, accountKindMigration];
