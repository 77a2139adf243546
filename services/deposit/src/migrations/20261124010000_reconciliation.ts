import type { Migration } from "@payments/kit";

/**
 * Reconciliation: every incoming transfer gets a status of its own and the explanation of
 * its match; transfers no deposit took sit in a suspense ledger per receiving account and
 * currency; every operator action on a transfer is recorded (who, when, why).
 *
 * Transfer statuses: `matched` (it paid a deposit), `review` (waiting for an operator:
 * ambiguous, under- or overpaid, or late, by the merchant's rules), `unmatched` (no deposit:
 * its money is in suspense), `returning` (being paid back to the sender), `returned`.
 * Existing rows become `matched` or `unmatched`, and the unmatched ones are put in suspense.
 */
export const reconciliationMigration: Migration = {
  name: "20261124010000_reconciliation",
  async up(db) {
    await db.schema.alterTable("incoming_transfers", (t) => {
      t.string("status", 16).notNullable().defaultTo("unmatched");
      // The deposit a transfer in review is attached to (under/over/late payment), when one.
      t.string("review_deposit_id", 40).nullable();
      t.string("match_by", 16).nullable();
      t.double("match_score").nullable();
      // JSON: the match's reasons (["reference exact", "name 0.94", "amount exact"]).
      t.text("match_reasons").nullable();
      // JSON: ranked candidates of an ambiguous transfer [{depositId, score, reasons}].
      t.text("candidates").nullable();
      t.boolean("late").notNullable().defaultTo(false);
      t.string("value_date", 10).nullable();
      t.string("sender_iban", 34).nullable();
      // api (ReportTransfer), mt940, feed:<feedId>, sandbox.
      t.string("source", 60).notNullable().defaultTo("api");
      t.string("resolved_by", 100).nullable();
      t.bigInteger("resolved_at").nullable();
      t.string("resolution", 500).nullable();
      t.index(["status", "reported_at"], "incoming_transfers_status");
    });
    await db("incoming_transfers").whereNotNull("deposit_id").update({ status: "matched" });

    await db.schema.alterTable("deposits", (t) => {
      // Completed by a transfer that arrived after the deposit had expired.
      t.boolean("late_payment").notNullable().defaultTo(false);
      // How the transfer that completed it was matched, copied here so a deposit read needs no join.
      t.string("match_by", 16).nullable();
      t.double("match_score").nullable();
      t.text("match_reasons").nullable();
    });

    await db.schema.createTable("suspense_entries", (t) => {
      t.string("id", 40).primary();
      t.string("iban", 34).notNullable();
      t.string("currency", 3).notNullable();
      t.string("transfer_id", 40).notNullable();
      // +amount when a transfer enters suspense, -amount when it leaves (to a deposit, back to the sender).
      t.bigInteger("amount").notNullable();
      t.string("kind", 16).notNullable();
      t.string("deposit_id", 40).nullable();
      t.bigInteger("at").notNullable();
      t.index(["iban", "currency", "at"], "suspense_entries_account");
      t.index(["transfer_id"], "suspense_entries_transfer");
    });
    const unmatched = await db("incoming_transfers")
      .where({ status: "unmatched" })
      .select<Array<{ id: string; iban: string; currency: string; amount: number; reported_at: number }>>("id", "iban", "currency", "amount", "reported_at");
    for (const row of unmatched) {
      await db("suspense_entries").insert({ id: `sus_${row.id}`, iban: row.iban, currency: row.currency, transfer_id: row.id, amount: row.amount, kind: "received", deposit_id: null, at: row.reported_at });
    }

    await db.schema.createTable("transfer_actions", (t) => {
      t.string("id", 40).primary();
      t.string("transfer_id", 40).notNullable();
      // matched, completed, refused, return_requested, returned, return_failed
      t.string("action", 24).notNullable();
      t.string("actor", 100).notNullable();
      t.string("reason", 500).notNullable();
      t.string("deposit_id", 40).nullable();
      t.bigInteger("at").notNullable();
      t.index(["transfer_id", "at"], "transfer_actions_transfer");
    });
  },
  async down(db) {
    await db.schema.dropTable("transfer_actions");
    await db.schema.dropTable("suspense_entries");
    await db.schema.alterTable("deposits", (t) => {
      for (const column of ["late_payment", "match_by", "match_score", "match_reasons"]) t.dropColumn(column);
    });
    await db.schema.alterTable("incoming_transfers", (t) => {
      t.dropIndex(["status", "reported_at"], "incoming_transfers_status");
      for (const column of ["status", "review_deposit_id", "match_by", "match_score", "match_reasons", "candidates", "late", "value_date", "sender_iban", "source", "resolved_by", "resolved_at", "resolution"]) t.dropColumn(column);
    });
  },
};
