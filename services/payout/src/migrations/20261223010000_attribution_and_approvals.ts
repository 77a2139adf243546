import type { Migration } from "@payments/kit";

/**
 * Issue 32: every money move attributable, and the merchant's four-eyes on its API keys'
 * withdrawals. All new columns are nullable: rows from before say nothing (an empty string in
 * the messages), which is what is known of them.
 *
 * - withdrawals.created_by: who created it, in words (`@payments/access` callerAttribution);
 *   api_key_id: the merchant's API key when the gateway asked.
 * - withdrawals.approval (null: none needed; awaiting, approved, rejected, expired, cancelled,
 *   trusted_key), approval_expires_at, approval_decided_by, approval_decided_at, approval_note:
 *   an API key's withdrawal above the merchant's threshold waits, pending and held, for a second
 *   person of the merchant (src/withdrawal-approval.ts).
 * - ledger_entries.actor: who made the money move (a credit carries the deposit's completer).
 *
 * Two indexes: the expiry job's scan of the approvals that wait ((approval, status,
 * approval_expires_at): one range of awaiting, pending rows in expiry order), and a merchant's
 * list of what waits, oldest first ((merchant_id, approval, created_at, id)).
 */
export const attributionAndApprovalsMigration: Migration = {
  name: "20261223010000_attribution_and_approvals",
  async up(db) {
    await db.schema.alterTable("withdrawals", (t) => {
      t.string("created_by", 500).nullable();
      t.string("api_key_id", 100).nullable();
      t.string("approval", 16).nullable();
      t.bigInteger("approval_expires_at").nullable();
      t.string("approval_decided_by", 500).nullable();
      t.bigInteger("approval_decided_at").nullable();
      t.string("approval_note", 500).nullable();
      t.index(["approval", "status", "approval_expires_at"], "withdrawals_approval_expiry");
      t.index(["merchant_id", "approval", "created_at", "id"], "withdrawals_merchant_approval");
    });
    await db.schema.alterTable("ledger_entries", (t) => {
      t.string("actor", 500).nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("ledger_entries", (t) => {
      t.dropColumn("actor");
    });
    await db.schema.alterTable("withdrawals", (t) => {
      t.dropIndex(["merchant_id", "approval", "created_at", "id"], "withdrawals_merchant_approval");
      t.dropIndex(["approval", "status", "approval_expires_at"], "withdrawals_approval_expiry");
      for (const column of ["created_by", "api_key_id", "approval", "approval_expires_at", "approval_decided_by", "approval_decided_at", "approval_note"]) t.dropColumn(column);
    });
  },
};
