import type { Migration } from "@payments/kit";
import { operatorsMigration } from "./20261201000000_operators.js";

/** The console's migrations, in order. */
export const consoleMigrations: readonly Migration[] = [operatorsMigration];
