import type { Migration } from "@payments/kit";
import { merchantsMigration } from "./20261122000000_merchants.js";
import { webhookSecretsMigration } from "./20261124000000_webhook_secrets.js";
import { paymentRulesMigration } from "./20261125000000_payment_rules.js";
import { displayNameMigration } from "./20261127000000_display_name.js";
import { withdrawalApprovalMigration } from "./20261216000000_withdrawal_approval.js";
import { apiKeysMigration } from "./20261222000000_api_keys.js";

/** Every migration of the merchant service, oldest first. */
export const migrations: readonly Migration[] = [merchantsMigration, webhookSecretsMigration, paymentRulesMigration, displayNameMigration, withdrawalApprovalMigration, apiKeysMigration];
