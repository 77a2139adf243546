import type { Migration } from "@payments/kit";
import { catalogMigration } from "./20261122020000_catalog.js";
import { seedMigration } from "./20261122020100_seed.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [catalogMigration, seedMigration];
