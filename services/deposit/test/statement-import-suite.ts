import type { TestFn } from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { errorInfo, isMysql, type RunningServices } from "@payments/kit";
import { addTestReceivingAccounts, createServiceClient } from "@payments/testing";
import type { Knex } from "knex";
import type { DepositContext } from "../src/context.js";

// Statement imports (ImportStatement), the same tests on SQLite (statement-import-sqlite) and
// MariaDB (statement-import-mysql): whole files or nothing, only our accounts, and line ids
// that hold across statements.

export function statementImportSuite(test: TestFn, start: () => Promise<RunningServices>): void {
  let running: RunningServices | undefined;
  const services = (): RunningServices => running!;
  const deposits = () => createServiceClient(DepositService, services().server.url);
  const db = (): Knex => (services().contexts.get("deposit") as DepositContext).db;
  let ours = "";
  let merchantId = "";
  let bankId = "";

  test.before(async () => {
    running = await start();
    const catalog = createServiceClient(BankCatalogService, services().server.url);
    await addTestReceivingAccounts(catalog);
    const { accounts } = await catalog.listReceivingAccounts({ sandbox: true });
    ours = accounts[0]!.iban;
    bankId = accounts[0]!.bankId;
    merchantId = (await createServiceClient(MerchantService, services().server.url).createMerchant({ name: "Statement Shop", sandbox: true })).merchant!.id;
  });

  const encode = (text: string) => new TextEncoder().encode(text);
  const mt940 = (iban: string, ref: string, lines: string[], total: string, date = "261122") =>
    [`:20:${ref}`, `:25:${iban}`, ":28C:00001/001", `:60F:C${date}TRY0,00`, ...lines, `:62F:C${date}TRY${total}`, "-"].join("\n");
  const transfersOf = async (ids: string[]) => await db()("incoming_transfers").where({ iban: ours }).whereIn("bank_transaction_id", ids).select<Array<Record<string, unknown>>>("bank_transaction_id", "status", "amount");
  const transfersWith = async (text: string) => await db()("incoming_transfers").where("reference", "like", `%${text}%`).select<Array<Record<string, unknown>>>("bank_transaction_id", "value_date", "amount");

  test.serial("a customer reference the bank repeats on another day's statement, with no bank reference, is a second transfer, not a duplicate", async (t) => {
    const day1 = mt940(ours, "DAY1", [":61:2611221122C150,00NTRFMUSTREF777", ":86:GELEN EFT AHMET SAHIN\nKIRA REPEATREF"], "150,00", "261122");
    const day2 = mt940(ours, "DAY2", [":61:2611231123C150,00NTRFMUSTREF777", ":86:GELEN EFT AHMET SAHIN\nKIRA REPEATREF"], "150,00", "261123");
    t.like(await deposits().importStatement({ format: "mt940", content: encode(day1), fileName: "day1.sta" }), { imported: 1, duplicates: 0 });
    t.like(await deposits().importStatement({ format: "mt940", content: encode(day2), fileName: "day2.sta" }), { imported: 1, duplicates: 0 });
    const rows = await transfersWith("REPEATREF");
    t.deepEqual(rows.map((r) => r.value_date).sort(), ["2026-11-22", "2026-11-23"], "both days' transfers are recorded");
    // The very same file again: all duplicates.
    t.like(await deposits().importStatement({ format: "mt940", content: encode(day2), fileName: "day2-again.sta" }), { imported: 0, duplicates: 1 });
  });

  test.serial("a line recorded under the former id rule (its customer reference) is still a duplicate when its file is imported again", async (t) => {
    const file = mt940(ours, "OLDRULE", [":61:2611241124C99,00NTRFOLDCUSTREF1", ":86:GELEN EFT ZEYNEP KOC\nFORMERID"], "99,00", "261124");
    // What the import before issue 18 recorded for this line: the customer reference as the id.
    await db()("incoming_transfers").insert({
      id: "trf_formerrule0000000001",
      iban: ours,
      bank_transaction_id: "OLDCUSTREF1",
      amount: 9_900,
      currency: "TRY",
      sender_name: "ZEYNEP KOC",
      reference: "GELEN EFT ZEYNEP KOC FORMERID",
      deposit_id: null,
      unmatched_reason: "no pending deposit is assigned to this account",
      reported_at: Date.now(),
      status: "unmatched",
      value_date: "2026-11-24",
      source: "mt940",
    });
    await db()("suspense_entries").insert({ id: "sus_formerrule01", iban: ours, currency: "TRY", transfer_id: "trf_formerrule0000000001", amount: 9_900, kind: "received", deposit_id: null, at: Date.now() });
    t.like(await deposits().importStatement({ format: "mt940", content: encode(file), fileName: "old.sta" }), { imported: 0, duplicates: 1 });
    t.is((await transfersWith("FORMERID")).length, 1);
  });

  test.serial("a statement of an account that is not ours is refused whole, naming it, and nothing of the file is recorded", async (t) => {
    const foreignTr = "TR330006100519786457841326";
    const good = mt940(ours, "MIX1", [":61:2611221122C10,00NTRFNONREF//MIXGOOD1", ":86:GELEN EFT ALI VELI"], "10,00");
    const notOurs = mt940(foreignTr, "MIX2", [":61:2611221122C20,00NTRFNONREF//MIXBAD1", ":86:GELEN EFT ALI VELI"], "20,00");
    const refusal = errorInfo(await t.throwsAsync(deposits().importStatement({ format: "mt940", content: encode(`${good}\n${notOurs}`), fileName: "mixed.sta" })));
    t.like(refusal, { reason: "STATEMENT_INVALID" });
    t.regex(refusal.message, new RegExp(`mixed\\.sta: statement 2 .*account "${foreignTr}" is not one of our receiving accounts; nothing was imported`));
    t.deepEqual(await transfersOf(["MIXGOOD1", "MIXBAD1"]), [], "not even the statement of our account");
    const german = mt940("DE89370400440532013000", "DE1", [":61:2611221122C5,00NTRFNONREF//DEONE", ":86:SEPA"], "5,00");
    const refused = errorInfo(await t.throwsAsync(deposits().importStatement({ format: "mt940", content: encode(german), fileName: "de.sta" })));
    t.regex(refused.message, /account "DE89370400440532013000" is not a Turkish IBAN/);
  });

  test.serial("an import that fails on its last line records nothing of the file; imported again once the fault is gone, every line lands once", async (t) => {
    const file = mt940(
      ours,
      "ATOMIC",
      [":61:2611221122C11,00NTRFNONREF//ATOM1", ":86:GELEN EFT A", ":61:2611221122C12,00NTRFNONREF//ATOM2", ":86:GELEN EFT B", ":61:2611221122C13,00NTRFNONREF//ATOMBOOM", ":86:GELEN EFT C"],
      "36,00",
    );
    // A real fault of the database on the third line's insert.
    const mysql = isMysql(db());
    if (mysql) {
      await db().raw("CREATE TRIGGER fail_atom BEFORE INSERT ON incoming_transfers FOR EACH ROW BEGIN IF NEW.bank_transaction_id = 'ATOMBOOM' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom'; END IF; END");
    } else {
      await db().raw("CREATE TRIGGER fail_atom BEFORE INSERT ON incoming_transfers WHEN NEW.bank_transaction_id = 'ATOMBOOM' BEGIN SELECT RAISE(ABORT, 'boom'); END");
    }
    try {
      const failed = errorInfo(await t.throwsAsync(deposits().importStatement({ format: "mt940", content: encode(file), fileName: "atomic.sta" })));
      t.is(failed.message, "internal error", "no SQL reaches the caller");
      t.deepEqual(await transfersOf(["ATOM1", "ATOM2", "ATOMBOOM"]), [], "the first two lines were rolled back with the third");
    } finally {
      await db().raw("DROP TRIGGER fail_atom");
    }
    t.like(await deposits().importStatement({ format: "mt940", content: encode(file), fileName: "atomic.sta" }), { imported: 3, duplicates: 0 });
    t.is((await transfersOf(["ATOM1", "ATOM2", "ATOMBOOM"])).length, 3);
  });

  test.serial("a camt.053 statement completes the deposit its reference names, through the same matching", async (t) => {
    const { deposit } = await deposits().createDeposit({ merchantId, processId: `camt-${Date.now()}`, amount: 123_456n, bankId, customer: { id: "c1", name: "Elif Demir", username: "elif" } });
    const iban = deposit!.assignedAccount!.iban;
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>CAMT-TEST-1</MsgId><CreDtTm>2026-11-22T10:00:00</CreDtTm></GrpHdr>
<Stmt><Id>STMT-CAMT-1</Id><ElctrncSeqNb>1</ElctrncSeqNb><CreDtTm>2026-11-22T10:00:00</CreDtTm><Acct><Id><IBAN>${iban}</IBAN></Id></Acct>
<Ntry><Amt Ccy="TRY">1234.56</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-11-22</Dt></BookgDt><ValDt><Dt>2026-11-22</Dt></ValDt><AcctSvcrRef>CAMTREF-${deposit!.id.slice(-8)}</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>ELİF DEMİR</Nm></Dbtr><DbtrAcct><Id><IBAN>TR330006100519786457841326</IBAN></Id></DbtrAcct></RltdPties><RmtInf><Ustrd>Sipariş ödemesi ${deposit!.reference}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
</Stmt></BkToCstmrStmt></Document>`;
    t.like(await deposits().importStatement({ format: "camt053", content: encode(xml), fileName: "camt.xml" }), { imported: 1, matched: 1 });
    const { deposit: paid } = await deposits().getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit!.id } });
    t.like(paid, { status: DepositStatus.COMPLETED, amount: 123_456n, matchBy: "reference" });
    t.like(await deposits().importStatement({ format: "camt053", content: encode(xml), fileName: "camt.xml" }), { imported: 0, duplicates: 1 });
  });
}
