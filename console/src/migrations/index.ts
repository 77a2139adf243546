import { type Migration } from "@payments/kit";
import { auditChainMigration, auditMigration, auditWorkloadMigration } from "@payments/access";
import { operatorsMigration } from "./20261201000000_operators.js";
import { merchantUsersMigration } from "./20261215000000_merchant_users.js";

/**
 * The console's migrations, in order: its accounts, and the access package's operator audit (the
 * same append-only table every service keeps), where the console records the changes it makes
 * itself; then the merchant dashboard's users, their links and sessions; then the audit's
 * workload column and its hash chain (issue 32), as the services' audit has them: the console
 * writes each row in the transaction of the change it records.
 */
export const consoleMigrations: readonly Migration[] = [operatorsMigration, auditMigration, merchantUsersMigration, auditWorkloadMigration, auditChainMigration];
