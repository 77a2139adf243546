import { modeFenceMigration } from "@payments/kit";

/**
 * The merchants' mode fences (kit src/mode-fence.ts): while a merchant switches between
 * sandbox and live, withdrawals for it are refused; one row per merchant, never deleted.
 */
export const modeFencesMigration = modeFenceMigration("20261128010000_mode_fences");
