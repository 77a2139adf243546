import { readFileSync } from "node:fs";
import test from "ava";
import {
  BankFeedError,
  CAMT_MAX_BYTES,
  camt053Adapter,
  camt054Adapter,
  camtCompleteness,
  camtFormatOf,
  parseCamt053,
  parseCamt054,
  type IncomingTransferRecord,
} from "../src/bank-feed/index.js";

// The camt.053 / camt.054 adapters (src/bank-feed/camt.ts). Fixtures in fixtures/camt/ are
// modelled on published sample documents; each says which, and what was changed.

const fixture = (name: string) => readFileSync(new URL(`./fixtures/camt/${name}`, import.meta.url));
const fixtureText = (name: string) => fixture(name).toString("utf8");

const ACCOUNT = "TR060006200000100000012345";
const V02 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02";
const V08 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08";
const DERIVED = /^CAMT-[0-9a-f]{32}$/;

/** A one-statement camt.053.001.02 document around these entries (XML text). */
function statement(entries: string, options: { account?: string; namespace?: string; id?: string } = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="${options.namespace ?? V02}">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-11-20T10:00:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>${options.id ?? "S1"}</Id>
      <Acct><Id><IBAN>${options.account ?? ACCOUNT}</IBAN></Id></Acct>
${entries}
    </Stmt>
  </BkToCstmrStmt>
</Document>
`;
}

/** A booked credit entry with the given inner XML (amount 100.00 TRY unless given). */
function credit(inner = "", amount = "100.00"): string {
  return `      <Ntry><Amt Ccy="TRY">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-11-20</Dt></BookgDt>${inner}</Ntry>`;
}

function refusal(t: import("ava").ExecutionContext, run: () => unknown): BankFeedError {
  const err = t.throws(run, { instanceOf: BankFeedError });
  return err;
}

test("a camt.053.001.02 statement: booked credits become records, exact in kuruş, with Turkish names, descriptions and the bank's references", (t) => {
  const { records } = parseCamt053(fixture("statement-v02.xml"));
  t.deepEqual(records.slice(0, 4), [
    {
      receivingIban: ACCOUNT,
      amount: 150000,
      currency: "TRY",
      valueDate: "2026-11-20",
      senderName: "ŞÜKRÜ ÖZTÜRK",
      senderIban: "TR680001000000123456789012",
      // Both Ustrd lines, joined; &amp; decoded.
      description: "SİPARİŞ & KARGO ÖDEMESİ REF AB-CD 2345",
      bankTransactionId: "GAR2026112000001TX",
    },
    {
      receivingIban: ACCOUNT,
      amount: 25025,
      currency: "TRY",
      valueDate: "2026-11-20",
      senderName: "ĞÜLŞEN ÇAĞLAR IŞIK",
      // Printed in groups of four in the file: stored in electronic form.
      senderIban: "TR260004600000888000111222",
      description: "KİRA ÖDEMESİ REF XY-ZT 9876",
      bankTransactionId: "GAR2026112000005/1",
    },
    {
      receivingIban: ACCOUNT,
      amount: 50000,
      currency: "TRY",
      valueDate: "2026-11-20",
      senderName: "İBRAHİM IĞDIRLI",
      description: "QW-ER 1234",
      bankTransactionId: "GAR2026112000005/2",
    },
    {
      receivingIban: ACCOUNT,
      amount: 25025,
      currency: "TRY",
      valueDate: "2026-11-20",
      senderName: "AYŞE YILMAZ",
      description: "FAST GELEN AYŞE YILMAZ AÇIKLAMA: ÖDEME REF MN-OP 5678 TOPLU FAST ALACAK 3 İŞLEM",
      bankTransactionId: "GAR2026112000005/3",
    },
  ]);
  t.like(records[4], { receivingIban: ACCOUNT, amount: 7550, currency: "TRY", senderName: "", description: "HAVALE MEHMET ÖZ DEMİR AİDAT ÖDEMESİ REF ZZ-YY 4321" });
  t.regex(records[4]!.bankTransactionId, DERIVED, "no reference at all: a derived id");
  t.is(records.length, 5);
});

test("debits, reversals of credits, reversals of debits and pending entries are skipped, each with its reason, statement, entry number and line", (t) => {
  const { skipped } = parseCamt053(fixture("statement-v02.xml"));
  const label = "statement 1 (Id GAR-STMT-20261120-0042, ElctrncSeqNb 42, LglSeqNb 42)";
  t.deepEqual(skipped, [
    { entry: `${label}, Ntry #2`, line: 113, reason: "debit (money out of the account): only credits are imported" },
    { entry: `${label}, Ntry #3`, line: 127, reason: "reversal of an earlier credit (money taken back): not imported; an operator should check the credit it reverses" },
    { entry: `${label}, Ntry #4`, line: 141, reason: "pending (Sts PDNG): not booked yet; imported from the statement that shows it booked" },
    { entry: `${label}, Ntry #7`, line: 255, reason: "reversal of a debit (a payment of ours returned): not a customer's transfer, not imported" },
  ]);
});

test("camt.053.001.08 written with a namespace prefix: Sts/Cd, Dbtr/Pty/Nm, TxDtls/Amt and the date of ValDt/DtTm as written are read", (t) => {
  const { records, skipped } = parseCamt053(fixture("statement-v08.xml"));
  t.deepEqual(records[0], {
    receivingIban: ACCOUNT,
    amount: 275000,
    currency: "TRY",
    // ValDt 2026-11-22T00:30:00+03:00: the date the bank wrote, not shifted to UTC (the 21st), and not BookgDt.
    valueDate: "2026-11-22",
    senderName: "ÇİĞDEM ŞAHİN",
    senderIban: "TR920006400000112233445566",
    description: "ÖDEME REF AB-CD 2345 İÇİN",
    bankTransactionId: "YKB-20261121-0001",
  });
  t.deepEqual(records[1], {
    receivingIban: ACCOUNT,
    amount: 10000,
    currency: "TRY",
    valueDate: "2026-11-21",
    senderName: "OĞUZ GÜNDÜZ",
    description: "RF18539007547034",
    bankTransactionId: "FAST20261121000042",
  });
  t.is(records.length, 4);
  const label = "statement 1 (Id YKB-STMT-20261121, ElctrncSeqNb 7)";
  t.deepEqual(
    skipped.map((s) => [s.entry, s.reason]),
    [
      [`${label}, Ntry #5`, "pending (Sts PDNG): not booked yet; imported from the statement that shows it booked"],
      [`${label}, Ntry #6`, "information only (Sts INFO): not a booking"],
      [`${label}, Ntry #7`, "debit (money out of the account): only credits are imported"],
    ],
  );
});

test("an entry without a status is skipped as not known to be booked; any status but BOOK is skipped", (t) => {
  const noStatus = `      <Ntry><Amt Ccy="TRY">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2026-11-20</Dt></BookgDt></Ntry>`;
  const other = `      <Ntry><Amt Ccy="TRY">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>FUTR</Sts><BookgDt><Dt>2026-11-20</Dt></BookgDt></Ntry>`;
  const { records, skipped } = parseCamt053(statement(noStatus + other));
  t.deepEqual(records, []);
  t.deepEqual(
    skipped.map((s) => s.reason),
    ["no status (Sts): not known to be booked, not imported", "status FUTR: only booked (BOOK) entries are imported"],
  );
});

test("a batch entry gives one record per TxDtls with its own amount; a reference all its details share names the batch, so the entry's reference with the detail's position is used", (t) => {
  const { records } = parseCamt053(fixture("statement-v02.xml"));
  const batch = records.filter((r) => r.bankTransactionId.startsWith("GAR2026112000005/"));
  t.deepEqual(
    batch.map((r) => [r.amount, r.bankTransactionId]),
    [
      [25025, "GAR2026112000005/1"],
      [50000, "GAR2026112000005/2"],
      [25025, "GAR2026112000005/3"],
    ],
  );
  t.is(
    batch.reduce((sum, r) => sum + r.amount, 0),
    100050,
    "the details add up to the entry (1000.50 TRY)",
  );
  // Details with their own distinct references keep them (camt.054 fixture).
  t.deepEqual(
    parseCamt054(fixture("notification-v08.xml")).records.map((r) => [r.amount, r.bankTransactionId]),
    [
      [100000, "ISB-20261121-7701-A"],
      [23456, "ISB-20261121-7701-B"],
    ],
  );
});

test("a batch whose details do not add up to the entry, or whose detail has no amount or another currency, is refused as a whole", (t) => {
  const detail = (amount: string, currency = "TRY") => `<TxDtls><AmtDtls><TxAmt><Amt Ccy="${currency}">${amount}</Amt></TxAmt></AmtDtls></TxDtls>`;
  const good = credit(`<NtryDtls>${detail("60.00")}${detail("40.00")}</NtryDtls>`);
  t.is(parseCamt053(statement(good)).records.length, 2);

  const short = refusal(t, () => parseCamt053(statement(credit(`<NtryDtls>${detail("60.00")}${detail("39.99")}</NtryDtls>`))));
  t.regex(short.issues[0]!, /^camt\.053\.001\.02: line \d+: statement 1 \(Id S1\), Ntry #1: the amounts of its 2 TxDtls add up to 99\.99 TRY, not the entry's 100\.00 TRY$/);

  const missing = refusal(t, () => parseCamt053(statement(credit(`<NtryDtls>${detail("60.00")}<TxDtls><RmtInf><Ustrd>x</Ustrd></RmtInf></TxDtls></NtryDtls>`))));
  t.regex(missing.message, /TxDtls #2 has no amount, so the entry's 2 transfers cannot be told apart/);

  const currency = refusal(t, () => parseCamt053(statement(credit(`<NtryDtls>${detail("60.00")}${detail("40.00", "EUR")}</NtryDtls>`))));
  t.regex(currency.message, /TxDtls #2 is in EUR, the entry in TRY/);

  // One detail whose amount differs from its entry's does not add up either.
  const single = refusal(t, () => parseCamt053(statement(credit(`<NtryDtls>${detail("99.00")}</NtryDtls>`))));
  t.regex(single.message, /add up to 99\.00 TRY, not the entry's 100\.00 TRY/);
});

test("a debit detail inside a credit entry (a charge) counts against the sum and is skipped; a zero detail is skipped", (t) => {
  const inner = `<NtryDtls>
    <TxDtls><Refs><AcctSvcrRef>A1</AcctSvcrRef></Refs><Amt Ccy="TRY">101.50</Amt><CdtDbtInd>CRDT</CdtDbtInd></TxDtls>
    <TxDtls><Refs><AcctSvcrRef>A2</AcctSvcrRef></Refs><Amt Ccy="TRY">1.50</Amt><CdtDbtInd>DBIT</CdtDbtInd></TxDtls>
    <TxDtls><Refs><AcctSvcrRef>A3</AcctSvcrRef></Refs><Amt Ccy="TRY">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd></TxDtls>
  </NtryDtls>`;
  const { records, skipped } = parseCamt053(statement(credit(inner)));
  t.deepEqual(
    records.map((r) => [r.amount, r.bankTransactionId]),
    [[10150, "A1"]],
  );
  t.deepEqual(
    skipped.map((s) => [s.entry, s.reason]),
    [
      ["statement 1 (Id S1), Ntry #1, TxDtls #2", "debit (money out of the account): only credits are imported (a debit inside a credit entry)"],
      ["statement 1 (Id S1), Ntry #1, TxDtls #3", "zero amount: nothing was paid"],
    ],
  );
});

test("bankTransactionId: the detail's AcctSvcrRef, else the entry's, else TxId, else EndToEndId; NOTPROVIDED never", (t) => {
  const refs = (inner: string, entryRef?: string) => credit(`${entryRef ? `<AcctSvcrRef>${entryRef}</AcctSvcrRef>` : ""}<NtryDtls><TxDtls><Refs>${inner}</Refs></TxDtls></NtryDtls>`);
  const ids = parseCamt053(
    statement(
      [
        refs("<AcctSvcrRef>DETAIL-1</AcctSvcrRef><TxId>TX-1</TxId><EndToEndId>E2E-1</EndToEndId>", "ENTRY-1"),
        refs("<TxId>TX-2</TxId><EndToEndId>E2E-2</EndToEndId>", "ENTRY-2"),
        refs("<TxId>TX-3</TxId><EndToEndId>E2E-3</EndToEndId>"),
        refs("<TxId>NOTPROVIDED</TxId><EndToEndId>E2E-4</EndToEndId>"),
        refs("<AcctSvcrRef>NOTPROVIDED</AcctSvcrRef><EndToEndId>NOTPROVIDED</EndToEndId>", "NOTPROVIDED"),
      ].join("\n"),
    ),
  ).records.map((r) => r.bankTransactionId);
  t.deepEqual(ids.slice(0, 4), ["DETAIL-1", "ENTRY-2", "TX-3", "E2E-4"]);
  t.regex(ids[4]!, DERIVED);
});

test("a payer's reference that repeats within the file is not used as the id: each such transfer gets its own derived id", (t) => {
  // statement-v08: two credits whose only reference is EndToEndId "1".
  const { records } = parseCamt053(fixture("statement-v08.xml"));
  const [zeynep, emre] = [records[2]!, records[3]!];
  t.is(zeynep.senderName, "ZEYNEP KAYA");
  t.is(emre.senderName, "EMRE ÇELİK");
  t.regex(zeynep.bankTransactionId, DERIVED);
  t.regex(emre.bankTransactionId, DERIVED);
  t.not(zeynep.bankTransactionId, emre.bankTransactionId);
});

test("two transfers that would share a bank reference both take derived ids, so neither is taken for a duplicate of the other", (t) => {
  const doc = statement([credit("<AcctSvcrRef>SAME</AcctSvcrRef>"), credit("<AcctSvcrRef>SAME</AcctSvcrRef>", "200.00")].join("\n"));
  const ids = parseCamt053(doc).records.map((r) => r.bankTransactionId);
  t.is(ids.length, 2);
  for (const id of ids) t.regex(id, DERIVED);
  t.not(ids[0], ids[1]);
});

test("a derived id is the same on every import of the same file and different for every transfer of the file", (t) => {
  const entries = Array.from({ length: 6 }, (_, i) => credit(`<AddtlNtryInf>ODEME ${i}</AddtlNtryInf>`, "10.00")).join("\n");
  const first = parseCamt053(statement(entries)).records.map((r) => r.bankTransactionId);
  const again = parseCamt053(Buffer.from(statement(entries))).records.map((r) => r.bankTransactionId);
  t.deepEqual(first, again);
  t.is(new Set(first).size, 6, "same amount, date and account, yet six ids");
  for (const id of first) t.regex(id, DERIVED);
  // Another statement (Id) with the same lines is other transfers.
  const other = parseCamt053(statement(entries, { id: "S2" })).records.map((r) => r.bankTransactionId);
  t.false(other.some((id) => first.includes(id)));
});

test("the value date is ValDt, else BookgDt; a date that is not one is refused", (t) => {
  const both = credit("<ValDt><Dt>2026-11-21</Dt></ValDt>");
  const booking = `      <Ntry><Amt Ccy="TRY">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><DtTm>2026-11-19T23:59:00-05:00</DtTm></BookgDt></Ntry>`;
  t.deepEqual(
    parseCamt053(statement(both + booking)).records.map((r) => r.valueDate),
    ["2026-11-21", "2026-11-19"],
  );
  const bad = refusal(t, () => parseCamt053(statement(credit("<ValDt><Dt>2026-02-30</Dt></ValDt>"))));
  t.regex(bad.message, /Ntry #1: ValDt "2026-02-30" is not a date/);
  const none = refusal(t, () => parseCamt053(statement(`<Ntry><Amt Ccy="TRY">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts></Ntry>`)));
  t.regex(none.message, /Ntry #1: neither ValDt nor BookgDt gives a date/);
});

test("description: every Ustrd and Strd reference; the bank's AddtlTxInf and AddtlNtryInf only when the payer wrote no remittance information", (t) => {
  const withRemittance = credit(
    `<NtryDtls><TxDtls><RmtInf><Ustrd>SATIR 1</Ustrd><Ustrd>SATIR 2</Ustrd><Strd><CdtrRefInf><Ref>AB-CD 2345</Ref></CdtrRefInf></Strd></RmtInf><AddtlTxInf>BANKA METNİ</AddtlTxInf></TxDtls></NtryDtls><AddtlNtryInf>GİRİŞ METNİ</AddtlNtryInf>`,
  );
  const without = credit(`<NtryDtls><TxDtls><AddtlTxInf>GELEN FAST REF AB-CD 2345</AddtlTxInf></TxDtls></NtryDtls><AddtlNtryInf>GİRİŞ METNİ</AddtlNtryInf>`);
  const noDetails = credit(`<AddtlNtryInf>EFT GELEN REF AB-CD 2345</AddtlNtryInf>`);
  t.deepEqual(
    parseCamt053(statement([withRemittance, without, noDetails].join("\n"))).records.map((r) => r.description),
    ["SATIR 1 SATIR 2 AB-CD 2345", "GELEN FAST REF AB-CD 2345 GİRİŞ METNİ", "EFT GELEN REF AB-CD 2345"],
  );
});

test("description and sender name are cleaned and cut to the columns' limits", (t) => {
  const long = "Ö".repeat(600);
  const doc = statement(credit(`<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>  AYŞE\t\tYILMAZ ${"X".repeat(300)}</Nm></Dbtr></RltdPties><RmtInf><Ustrd>${long}</Ustrd></RmtInf></TxDtls></NtryDtls>`));
  const [record] = parseCamt053(doc).records;
  t.is(record!.description.length, 500);
  t.is(record!.senderName.length, 200);
  t.true(record!.senderName.startsWith("AYŞE YILMAZ X"));
});

test("sender: Dbtr's name (.02 Nm, .08 Pty/Nm), else the ultimate debtor's; the IBAN only from DbtrAcct and only when valid", (t) => {
  const party = (parties: string) => credit(`<NtryDtls><TxDtls><RltdPties>${parties}</RltdPties></TxDtls></NtryDtls>`);
  const records = parseCamt053(
    statement(
      [
        party("<UltmtDbtr><Nm>NİHAİ BORÇLU</Nm></UltmtDbtr><Dbtr><Nm>BORÇLU</Nm></Dbtr>"),
        party("<Dbtr><Pty><Nm>PTY BORÇLU</Nm></Pty></Dbtr>"),
        party("<UltmtDbtr><Pty><Nm>NİHAİ PTY</Nm></Pty></UltmtDbtr><DbtrAcct><Id><IBAN>TR000001000000123456789012</IBAN></Id></DbtrAcct>"),
        party("<Cdtr><Nm>ALICI</Nm></Cdtr><DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>"),
      ].join("\n"),
    ),
  ).records;
  t.deepEqual(
    records.map((r) => [r.senderName, r.senderIban]),
    [
      ["BORÇLU", undefined],
      ["PTY BORÇLU", undefined],
      ["NİHAİ PTY", undefined],
      ["", "DE89370400440532013000"],
    ],
  );
});

test("every statement is reported with its label and account; records come only from statements of a Turkish IBAN, the others skipped as a whole", (t) => {
  const { records, skipped, statements } = parseCamt053(fixture("foreign-account-v02.xml"));
  t.deepEqual(statements, [
    { label: "statement 1 (Id MIX-TRY-20261120, ElctrncSeqNb 101)", account: ACCOUNT, receivingIban: ACCOUNT, line: 18 },
    { label: "statement 2 (Id MIX-EUR-20261120, ElctrncSeqNb 102)", account: "DE89370400440532013000", line: 54 },
  ]);
  t.deepEqual(
    records.map((r) => [r.receivingIban, r.bankTransactionId]),
    [[ACCOUNT, "MIX-TRY-0001"]],
  );
  t.deepEqual(skipped, [
    { entry: "statement 2 (Id MIX-EUR-20261120, ElctrncSeqNb 102)", line: 54, reason: 'Acct "DE89370400440532013000" is not a Turkish IBAN: this account\'s 1 entry was not imported' },
  ]);
});

test("an account given as Othr/Id is reported as given, with its Turkish IBAN when it holds one", (t) => {
  const doc = statement(credit("<AcctSvcrRef>R1</AcctSvcrRef>")).replace(`<IBAN>${ACCOUNT}</IBAN>`, `<Othr><Id>0062/${ACCOUNT} TRY</Id></Othr>`);
  const { records, statements } = parseCamt053(doc);
  t.deepEqual(statements, [{ label: "statement 1 (Id S1)", account: `0062/${ACCOUNT} TRY`, receivingIban: ACCOUNT, line: 5 }]);
  t.is(records[0]!.receivingIban, ACCOUNT);
});

test("camt.054 notifications, .02 and .08, are read by camt054: each Ntfctn is a statement of its account", (t) => {
  const v02 = parseCamt054(fixture("notification-v02.xml"));
  t.deepEqual(v02.records, [
    {
      receivingIban: ACCOUNT,
      amount: 45000,
      currency: "TRY",
      valueDate: "2026-11-22",
      senderName: "SELİN AKÇAY",
      description: "ÖDEME REF CD-EF 6543",
      bankTransactionId: "AKB-20261122-000031",
    },
  ]);
  t.deepEqual(v02.statements, [{ label: "notification 1 (Id AKB-NTF-20261122-0003, ElctrncSeqNb 3)", account: ACCOUNT, receivingIban: ACCOUNT, line: 17 }]);
  const v08 = parseCamt054(fixture("notification-v08.xml"));
  t.deepEqual(v08.records[1], {
    receivingIban: ACCOUNT,
    amount: 23456,
    currency: "TRY",
    valueDate: "2026-11-21",
    senderName: "FATMA ŞENTÜRK",
    senderIban: "TR590001200000555500003333",
    description: "REF TU-VW 7890 TEŞEKKÜRLER",
    bankTransactionId: "ISB-20261121-7701-B",
  });
  t.is(camt054Adapter.name, "camt054");
  t.deepEqual(camt054Adapter.parse(fixture("notification-v08.xml")), v08);
});

test("each adapter refuses the other message, naming the adapter to import it with", (t) => {
  t.regex(refusal(t, () => camt053Adapter.parse(fixture("notification-v08.xml"))).message, /^camt\.053: the document is a camt\.054\.001\.08 notification message: import it as camt054, not camt053$/);
  t.regex(refusal(t, () => camt054Adapter.parse(fixture("statement-v02.xml"))).message, /import it as camt053, not camt054/);
});

test("an unknown message or version, a root without a namespace, and a root that is not Document are refused, saying what is read", (t) => {
  const v04 = refusal(t, () => parseCamt053(statement(credit(), { namespace: "urn:iso:std:iso:20022:tech:xsd:camt.053.001.04" })));
  t.is(v04.message, 'camt.053: the document\'s namespace "urn:iso:std:iso:20022:tech:xsd:camt.053.001.04" is not a message this reader knows (it reads camt.053.001.02, camt.053.001.08, camt.054.001.02, camt.054.001.08)');
  const bare = refusal(t, () => parseCamt053(statement(credit()).replace(` xmlns="${V02}"`, "")));
  t.regex(bare.message, /the root element <Document> has no namespace/);
  const envelope = refusal(t, () => parseCamt053(`<BizMsgEnvlp xmlns="urn:x">${statement(credit()).replace(/<\?xml[^>]*>/, "")}</BizMsgEnvlp>`));
  t.regex(envelope.message, /the root element is <BizMsgEnvlp>, not an ISO 20022 <Document>/);
});

test("malformed XML is refused with its line (and column); so is a document with two roots or none", (t) => {
  const full = statement(credit());
  const cut = refusal(t, () => parseCamt053(full.slice(0, full.indexOf("</Stmt>"))));
  t.regex(cut.message, /^camt\.053: line \d+, column \d+: not well-formed XML: /);
  const crossed = refusal(t, () => parseCamt053(full.replace("<Sts>BOOK</Sts>", "<Sts>BOOK</CdtDbtInd>")));
  t.regex(crossed.message, /^camt\.053: line 8, column \d+: not well-formed XML: Expected closing tag 'Sts'/);
  t.regex(refusal(t, () => parseCamt053(`${full}<Document xmlns="${V02}"/>`)).message, /2 root elements/);
  t.regex(refusal(t, () => parseCamt053('<?xml version="1.0"?>\n<!-- nothing else -->')).message, /^camt\.053: line 1: not well-formed XML: Start tag expected/);
  t.regex(refusal(t, () => parseCamt053(new Uint8Array())).message, /the document is empty/);
});

test("every missing mandatory element and every amount that is not one is listed, each with its place, and nothing is imported", (t) => {
  const doc = `<?xml version="1.0"?>
<Document xmlns="${V08}">
  <BkToCstmrStmt>
    <Stmt>
      <Acct><Id><IBAN>${ACCOUNT}</IBAN></Id></Acct>
      <Ntry><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts></Ntry>
      <Ntry><Amt Ccy="TRY">12,50</Amt><Sts><Cd>BOOK</Cd></Sts></Ntry>
      <Ntry><Amt>10.00</Amt><CdtDbtInd>CREDIT</CdtDbtInd></Ntry>
      <Ntry><Amt Ccy="TRY">1.005</Amt><CdtDbtInd>CRDT</CdtDbtInd><RvslInd>maybe</RvslInd></Ntry>
    </Stmt>
    <Stmt>
      <Id>S2</Id>
    </Stmt>
  </BkToCstmrStmt>
</Document>`;
  const err = refusal(t, () => parseCamt053(doc));
  const s1 = "statement 1 (Id missing)";
  t.deepEqual(err.issues, [
    `camt.053.001.08: line 4: ${s1}: Stmt/Id is missing`,
    `camt.053.001.08: line 6: ${s1}, Ntry #1: Amt is missing`,
    `camt.053.001.08: line 7: ${s1}, Ntry #2: Amt "12,50" is not an amount in TRY (digits, a point, at most 2 decimals)`,
    `camt.053.001.08: line 7: ${s1}, Ntry #2: CdtDbtInd is missing`,
    `camt.053.001.08: line 8: ${s1}, Ntry #3: Amt has no currency (a Ccy attribute such as "TRY")`,
    `camt.053.001.08: line 8: ${s1}, Ntry #3: CdtDbtInd "CREDIT" is neither CRDT nor DBIT`,
    `camt.053.001.08: line 9: ${s1}, Ntry #4: Amt "1.005" is not an amount in TRY (digits, a point, at most 2 decimals)`,
    `camt.053.001.08: line 9: ${s1}, Ntry #4: RvslInd "maybe" is not a boolean`,
    "camt.053.001.08: line 11: statement 2 (Id S2): Stmt/Acct is missing",
  ]);
  t.is(err.message, `9 problems; the first: ${err.issues[0]}`);
});

test("a document with a DOCTYPE is refused before anything in it is expanded (entity bombs, external entities)", (t) => {
  const bomb = `<?xml version="1.0"?>
<!DOCTYPE Document [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
${statement(credit("<AddtlNtryInf>&c;</AddtlNtryInf>")).replace(/<\?xml[^>]*>\n/, "")}`;
  t.is(refusal(t, () => parseCamt053(bomb)).message, "camt.053: line 2: the document has a DOCTYPE (or ENTITY) declaration; camt documents have none, and it is refused for safety");
  const external = `<?xml version="1.0"?><!DOCTYPE d SYSTEM "file:///etc/passwd">${statement(credit()).replace(/<\?xml[^>]*>\n/, "")}`;
  t.regex(refusal(t, () => parseCamt053(external)).message, /DOCTYPE/);
});

test("the predefined entities and character references are decoded, CDATA is kept as written, and an undefined entity is refused", (t) => {
  const doc = statement(credit("<AddtlNtryInf>A &amp; B &lt;1&gt; &#350;&#x130;K &quot;x&apos; <![CDATA[&amp; literal]]></AddtlNtryInf>"));
  t.is(parseCamt053(doc).records[0]!.description, "A & B <1> ŞİK \"x' &amp; literal");
  const undefinedEntity = refusal(t, () => parseCamt053(statement(credit("<AddtlNtryInf>&nbsp;</AddtlNtryInf>"))));
  t.regex(undefinedEntity.message, /<AddtlNtryInf>: uses the undefined entity &nbsp;/);
});

test("a document larger than CAMT_MAX_BYTES is refused without being parsed", (t) => {
  const huge = new Uint8Array(CAMT_MAX_BYTES + 1).fill(0x20);
  t.is(refusal(t, () => parseCamt053(huge)).message, `camt.053: the document is larger than ${CAMT_MAX_BYTES} bytes`);
});

test("bytes are read as UTF-8 (with or without BOM) or in the encoding the XML declaration names; invalid UTF-8 is refused", (t) => {
  const text = statement(credit("<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>ŞÜKRÜ ĞİÇÖ ışğ</Nm></Dbtr></RltdPties></TxDtls></NtryDtls>"));
  const utf8 = Buffer.from(text, "utf8");
  t.is(parseCamt053(utf8).records[0]!.senderName, "ŞÜKRÜ ĞİÇÖ ışğ");
  t.is(parseCamt053(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8])).records[0]!.senderName, "ŞÜKRÜ ĞİÇÖ ışğ");

  // ISO-8859-9 (Latin-5): the Turkish letters are single bytes.
  const latin5: Record<string, number> = { Ğ: 0xd0, İ: 0xdd, Ş: 0xde, ğ: 0xf0, ı: 0xfd, ş: 0xfe };
  const declared = text.replace('encoding="UTF-8"', 'encoding="ISO-8859-9"');
  const bytes = Uint8Array.from([...declared].map((c) => latin5[c] ?? c.charCodeAt(0)));
  t.is(parseCamt053(bytes).records[0]!.senderName, "ŞÜKRÜ ĞİÇÖ ışğ");

  // The same single bytes under the UTF-8 the declaration names are not UTF-8.
  const mislabelled = Uint8Array.from([...text].map((c) => latin5[c] ?? c.charCodeAt(0)));
  t.is(refusal(t, () => parseCamt053(mislabelled)).message, "camt.053: the document is not valid utf-8 text");
});

test("completeness: complete only once the document ends with its root element's closing tag, whatever its prefix; every cut short of that is incomplete with a reason", (t) => {
  for (const name of ["notification-v02.xml", "statement-v08.xml"]) {
    const bytes = fixture(name);
    t.deepEqual(camtCompleteness(bytes), { complete: true }, name);
    const end = Buffer.from(bytes.toString("utf8").trimEnd(), "utf8").length;
    for (let length = 0; length < end; length++) {
      const result = camtCompleteness(bytes.subarray(0, length));
      if (result.complete) {
        t.fail(`${name} cut at byte ${length} was reported complete`);
        return;
      }
      t.true(result.reason.length > 0);
    }
  }
  const cut = camtCompleteness(fixture("statement-v08.xml").subarray(0, 5000));
  t.deepEqual(cut, { complete: false, reason: "the document does not end with </ns2:Document> (its root element's closing tag): it is still being written, or was cut short" });
  t.deepEqual(camtCompleteness(new Uint8Array()), { complete: false, reason: "the file is empty" });
});

test("completeness: whitespace and comments after the root are allowed; a file that is not XML, or has a DOCTYPE, is complete so that parsing refuses it", (t) => {
  const text = fixtureText("notification-v02.xml");
  t.true(camtCompleteness(Buffer.from(`${text}\n\n<!-- end of file -->\r\n  `)).complete);
  t.true(camtCompleteness(Buffer.from("MT940 is not XML")).complete);
  t.true(camtCompleteness(Buffer.from(`<!DOCTYPE Document>${text}`.slice(0, 100))).complete);
  t.true(camtCompleteness(Buffer.from(`<Document xmlns="${V02}"/>`)).complete);
  t.false(camtCompleteness(Buffer.from(`<Document xmlns="${V02}"/><x>`)).complete);
  // Never throws, whatever the bytes.
  for (let seed = 1; seed < 200; seed++) {
    const random = Uint8Array.from({ length: seed * 7 }, (_, i) => (i * 2654435761 * seed) % 256);
    t.notThrows(() => camtCompleteness(random));
  }
});

test("the root namespace tells camt053 from camt054, whatever the prefix; anything else is undefined", (t) => {
  t.is(camtFormatOf(fixture("statement-v02.xml")), "camt053");
  t.is(camtFormatOf(fixture("statement-v08.xml")), "camt053");
  t.is(camtFormatOf(fixture("notification-v02.xml")), "camt054");
  t.is(camtFormatOf(fixture("notification-v08.xml")), "camt054");
  t.is(camtFormatOf(statement(credit(), { namespace: "urn:iso:std:iso:20022:tech:xsd:camt.052.001.02" })), undefined);
  t.is(camtFormatOf(":20:STMT1\n:25:TR..."), undefined);
  t.is(camtFormatOf(new Uint8Array()), undefined);
});

test("amounts are exact in the currency's smallest unit, from the text", (t) => {
  const amounts = ["0.01", "1", "75.5", "1234567.89", "90071992547409.91"].map((a) => credit("", a)).join("\n");
  t.deepEqual(
    parseCamt053(statement(amounts)).records.map((r: IncomingTransferRecord) => r.amount),
    [1, 100, 7550, 123456789, 9007199254740991],
  );
  const tooBig = refusal(t, () => parseCamt053(statement(credit("", "90071992547409.92"))));
  t.regex(tooBig.message, /Amt "90071992547409\.92" is not an amount in TRY/);
  const yen = statement(`<Ntry><Amt Ccy="JPY">2700</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-11-20</Dt></BookgDt></Ntry>`);
  t.like(parseCamt053(yen).records[0], { amount: 2700, currency: "JPY" });
});
