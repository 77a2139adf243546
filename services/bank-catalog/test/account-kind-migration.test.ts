import test from "ava";
import { migrate, openDatabase, outboxMigration, ensureDatabase } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { catalogMigration } from "../src/migrations/20261122020000_catalog.js";
import { seedMigration } from "../src/migrations/20261122020100_seed.js";
import { migrations } from "../src/migrations/index.js";
import { SEED_ACCOUNTS, seedBankId } from "../src/seed.js";

test("an install made before account kinds keeps its accounts: the made-up seeded ones become sandbox, an operator's stay live", async (t) => {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  try {
    // The database as earlier builds left it: the seed migration also inserted the made-up accounts.
    await migrate(db, [outboxMigration, catalogMigration, seedMigration]);
    const now = Date.now();
    await db("receiving_accounts").insert([
      ...SEED_ACCOUNTS.map((a) => ({ id: a.id, bank_id: a.bankId, account_name: a.accountName, iban: a.iban, active: true, fast_enabled: a.fastEnabled, created_at: now, updated_at: now })),
      { id: "acc_operator", bank_id: seedBankId("0046"), account_name: "Ödeme A.Ş.", iban: "TR940004607000000000000001", active: true, fast_enabled: true, created_at: now, updated_at: now },
    ]);

    const applied = await migrate(db, [outboxMigration, ...migrations]);
    t.deepEqual(applied, ["20261123000000_account_kind"]);
    const rows = await db("receiving_accounts").select<Array<{ id: string; sandbox: number | boolean }>>("id", "sandbox");
    const kind = new Map(rows.map((r) => [r.id, Boolean(r.sandbox)]));
    t.true(SEED_ACCOUNTS.every((a) => kind.get(a.id) === true), "every made-up account is sandbox now");
    t.false(kind.get("acc_operator"), "an account an operator added stays live");
  } finally {
    await db.destroy();
    await database.drop();
  }
});
