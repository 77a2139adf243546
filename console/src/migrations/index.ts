import { type Migration } from "@payments/kit";
import { auditMigration } from "@payments/access";
import { operatorsMigration } from "./20261201000000_operators.js";
import { merchantUsersMigration } from "./20261215000000_merchant_users.js";

/**
 * The console's migrations, in order: its accounts, and the kit's operator audit (the same
 * append-only table every service keeps), where the console records the changes it makes itself;
 * then the merchant dashboard's users, their links and sessions.
 */
export const consoleMigrations: readonly Migration[] = [operatorsMigration, auditMigration, merchantUsersMigration];
