import { mkdtempSync, rmSync } from "node:fs";
import { appendFile, mkdir, readdir, readFile, rename, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { createLogger, type RunningServices } from "@payments/kit";
import { createServiceClient, eventually, manualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { newDirScanState, scanBankFeedDir } from "../src/bank-feed/dir.js";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";

// BANK_FEED_DIR (src/bank-feed/dir.ts): the deposit service's job imports statement files
// dropped into a directory, each once, and files them under imported/ or failed/.

const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const root = mkdtempSync(join(tmpdir(), "deposit-feed-dir-"));
const feedDir = join(root, "drop");
let running: RunningServices | undefined;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchantId: string;
let ctx: DepositContext;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    clock,
    env: { DATA_DIR: root, LOG_LEVEL: "warn", MASTER_KEY: "cd".repeat(32), BANK_FEED_DIR: feedDir, BANK_FEED_INTERVAL: "50ms" },
    receivingAccounts: true,
  });
  deposits = createServiceClient(DepositService, running.server.url);
  const { merchant } = await createServiceClient(MerchantService, running.server.url).createMerchant({ name: "Feed Dir Shop", sandbox: true });
  merchantId = merchant!.id;
  ctx = running.contexts.get("deposit") as DepositContext;
});

test.after.always(async () => {
  await running?.stop();
  rmSync(root, { recursive: true, force: true });
});

function kurus(amount: number): string {
  return `${Math.floor(amount / 100)},${String(amount % 100).padStart(2, "0")}`;
}

/** A one-account MT940 statement with these credits. */
function statement(iban: string, credits: Array<{ amount: number; txId: string; text: string }>): string {
  const total = credits.reduce((sum, c) => sum + c.amount, 0);
  return [
    `:20:STMT${credits[0]!.txId}`,
    `:25:${iban}`,
    ":28C:00001/001",
    ":60F:C261121TRY0,00",
    ...credits.flatMap((c) => [`:61:2611221122C${kurus(c.amount)}NTRFNONREF//${c.txId}`, ":86:GELEN EFT AYSE YILMAZ", c.text]),
    `:62F:C261122TRY${kurus(total)}`,
    "-",
  ].join("\r\n");
}

/** Writes the file as a bank should (a dotfile renamed in), dated in the past so it counts as settled. */
async function drop(dir: string, name: string, content: string): Promise<void> {
  const temporary = join(dir, `.${name}.part`);
  await writeFile(temporary, content);
  const past = new Date(Date.now() - 60_000);
  await utimes(temporary, past, past);
  await rename(temporary, join(dir, name));
}

const list = (dir: string) => readdir(dir).catch(() => [] as string[]);

async function newDeposit(processId: string): Promise<Deposit> {
  const { deposit } = await deposits.createDeposit({ merchantId, processId, amount: 10_000n, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

const getDeposit = async (id: string) => (await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })).deposit!;
const transfersWith = async (ids: string[]) => Number((await ctx.db("incoming_transfers").whereIn("bank_transaction_id", ids).count<Array<{ n: number }>>({ n: "*" }))[0]!.n);

test.serial("a dropped statement crediting a pending deposit completes it and is moved to imported/; the same file again changes nothing", async (t) => {
  const deposit = await newDeposit("dir-1");
  const content = statement(deposit.assignedAccount!.iban, [{ amount: 10_000, txId: "DIRTX1", text: `ODEME REF ${deposit.reference}` }]);
  await drop(feedDir, "statement-1.sta", content);

  await eventually(async () => (await getDeposit(deposit.id)).status === DepositStatus.COMPLETED, "the deposit to complete");
  await eventually(async () => (await list(join(feedDir, "imported"))).some((f) => /-statement-1(-\d+)?\.sta$/.test(f)), "the file in imported/");
  t.false((await list(feedDir)).includes("statement-1.sta"));
  t.deepEqual(await list(join(feedDir, "processing")), []);
  t.is(await readFile(join(feedDir, "imported", (await list(join(feedDir, "imported")))[0]!), "utf8"), content, "kept as it came");
  const completed = await getDeposit(deposit.id);

  await drop(feedDir, "statement-1.sta", content);
  await eventually(async () => (await list(join(feedDir, "imported"))).filter((f) => /-statement-1(-\d+)?\.sta$/.test(f)).length === 2, "the second copy in imported/");
  t.is(await transfersWith(["DIRTX1"]), 1, "the transfer is recorded once");
  t.deepEqual(await getDeposit(deposit.id), completed, "the deposit is unchanged");
  t.deepEqual(await list(join(feedDir, "failed")), []);
});

test.serial("a malformed statement goes to failed/ with an .error.txt saying why; other files are left alone", async (t) => {
  await drop(feedDir, "notes.pdf", "%PDF-1.4");
  await drop(feedDir, "broken.940", "this is not\na statement\n");
  await eventually(async () => (await list(join(feedDir, "failed"))).length === 2, "broken.940 and its error in failed/");
  const failed = await list(join(feedDir, "failed"));
  const moved = failed.find((f) => f.endsWith("-broken.940"))!;
  t.truthy(moved);
  t.true(failed.includes(`${moved}.error.txt`));
  const why = await readFile(join(feedDir, "failed", `${moved}.error.txt`), "utf8");
  t.regex(why, /broken\.940: MT940: line 1: a statement must start with :20:/);
  t.true((await list(feedDir)).includes("notes.pdf"), "not a statement extension: left where it is");
  t.false((await list(feedDir)).includes("broken.940"));
});

test.serial("two scans of one directory at once import each file, and each transfer, exactly once", async (t) => {
  const dir = join(root, "shared");
  const { accounts } = await createServiceClient(BankCatalogService, running!.server.url).listReceivingAccounts({});
  const iban = accounts[0]!.iban;
  const ids: string[] = [];
  await mkdir(dir);
  for (let i = 0; i < 8; i++) {
    const txId = `RACE${i}`;
    ids.push(txId);
    await drop(dir, `race-${i}.mt940`, statement(iban, [{ amount: 5_000 + i, txId, text: "NO REFERENCE HERE" }]));
  }
  const [a, b] = await Promise.all([scanBankFeedDir(ctx, dir, undefined, 0), scanBankFeedDir(ctx, dir, undefined, 0)]);
  t.is(a.files + b.files, 8, "every file imported by one scan");
  t.is(a.imported + b.imported, 8);
  t.is(a.duplicates + b.duplicates, 0, "no file was imported twice");
  t.is((await list(join(dir, "imported"))).length, 8);
  t.deepEqual(await list(join(dir, "processing")), []);
  t.is(await transfersWith(ids), 8);
});

// ---- Only whole files: the write-then-rename convention, completeness, abandoned claims.

const receivingIban = async () => (await createServiceClient(BankCatalogService, running!.server.url).listReceivingAccounts({})).accounts[0]!.iban;

/** Writes a file dated a minute ago, so the settle time does not hold it back. */
async function writeSettled(path: string, content: string): Promise<void> {
  await writeFile(path, content);
  const past = new Date(Date.now() - 60_000);
  await utimes(path, past, past);
}

async function freshDir(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir);
  return dir;
}

interface LogLine {
  msg: string;
  file?: string;
  [key: string]: unknown;
}

/** The deposit context with a logger whose lines the test reads. */
function withLogs(): { ctx: DepositContext; logs: LogLine[] } {
  const logs: LogLine[] = [];
  const logger = createLogger({ service: "deposit", level: "info", destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) } });
  return { ctx: { ...ctx, logger }, logs };
}

/** A camt.053 statement (or camt.054 notification) of one account with these booked credits, each with the bank's reference. */
function camtDocument(iban: string, credits: Array<{ amount: number; ref: string; text: string }>, kind: "053" | "054" = "053"): string {
  const [container, report] = kind === "053" ? ["BkToCstmrStmt", "Stmt"] : ["BkToCstmrDbtCdtNtfctn", "Ntfctn"];
  const entries = credits.map(
    (c) => `      <Ntry>
        <Amt Ccy="TRY">${Math.floor(c.amount / 100)}.${String(c.amount % 100).padStart(2, "0")}</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts>BOOK</Sts>
        <BookgDt><Dt>2026-11-22</Dt></BookgDt>
        <AcctSvcrRef>${c.ref}</AcctSvcrRef>
        <NtryDtls><TxDtls><RltdPties><Dbtr><Nm>AYŞE YILMAZ</Nm></Dbtr></RltdPties><RmtInf><Ustrd>${c.text}</Ustrd></RmtInf></TxDtls></NtryDtls>
      </Ntry>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.${kind}.001.02">
  <${container}>
    <GrpHdr><MsgId>M-${credits[0]!.ref}</MsgId><CreDtTm>2026-11-22T10:00:00</CreDtTm></GrpHdr>
    <${report}>
      <Id>ID-${credits[0]!.ref}</Id>
      <Acct><Id><IBAN>${iban}</IBAN></Id></Acct>
${entries.join("\n")}
    </${report}>
  </${container}>
</Document>
`;
}

/** The time format of a claim's name, `when` ago on the service's clock. */
const claimStamp = (agoMs: number) => new Date(clock.now().getTime() - agoMs).toISOString().replace(/[-:.]/g, "");

test.serial("a file under a temporary name (a dotfile, .part, .TMP, ~, .filepart) is left alone without a log line, and imported once renamed to its final name", async (t) => {
  const dir = await freshDir("temporary-names");
  const iban = await receivingIban();
  const names: Array<[string, string]> = [
    [".bank-1.sta", "bank-1.sta"],
    ["bank-2.sta.part", "bank-2.sta"],
    ["BANK-3.STA.TMP", "bank-3.sta"],
    ["bank-4.sta~", "bank-4.sta"],
    ["bank-5.xml.filepart", "bank-5.xml"],
  ];
  for (const [i, [temporary]] of names.entries()) {
    const content = temporary.includes(".xml") ? camtDocument(iban, [{ amount: 1_000 + i, ref: `TMPNAME${i}`, text: "NO REFERENCE" }]) : statement(iban, [{ amount: 1_000 + i, txId: `TMPNAME${i}`, text: "NO REFERENCE" }]);
    await writeSettled(join(dir, temporary), content);
  }
  const { ctx: logged, logs } = withLogs();
  const state = newDirScanState();
  for (let pass = 0; pass < 2; pass++) {
    const counts = await scanBankFeedDir(logged, dir, state);
    t.is(counts.files + counts.failedFiles + counts.waiting, 0);
  }
  t.deepEqual(logs, [], "nothing to say about files still being written");
  t.deepEqual((await list(dir)).filter((f) => !["processing", "imported", "failed"].includes(f)).sort(), names.map(([temporary]) => temporary).sort());

  for (const [temporary, final] of names) await rename(join(dir, temporary), join(dir, final));
  const counts = await scanBankFeedDir(logged, dir, state);
  t.is(counts.files, names.length);
  t.is(counts.failedFiles, 0);
  t.is(await transfersWith(names.map((_, i) => `TMPNAME${i}`)), names.length, "each transfer recorded once");
  t.is((await list(join(dir, "imported"))).length, names.length);
});

test.serial("a camt file not complete yet waits, logged once per size, and is imported once its document is closed", async (t) => {
  const dir = await freshDir("incomplete-camt");
  const full = camtDocument(await receivingIban(), [
    { amount: 2_500, ref: "CAMTDIR1", text: "ÖDEME 1" },
    { amount: 3_500, ref: "CAMTDIR2", text: "ÖDEME 2" },
  ]);
  const path = join(dir, "statement.xml");
  const { ctx: logged, logs } = withLogs();
  const state = newDirScanState();
  const waitingLines = () => logs.filter((l) => l.msg === "bank feed directory: file not complete yet; left for a later pass" && l.file === "statement.xml");

  await writeSettled(path, full.slice(0, full.indexOf("CAMTDIR2")));
  for (let pass = 0; pass < 2; pass++) t.like(await scanBankFeedDir(logged, dir, state), { files: 0, failedFiles: 0, waiting: 1 });
  t.is(waitingLines().length, 1, "logged once for this size");
  t.regex(String(waitingLines()[0]!["reason"]), /does not end with <\/Document>/);

  await appendFile(path, full.slice(full.indexOf("CAMTDIR2"), full.indexOf("</Document>")));
  await utimes(path, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  t.like(await scanBankFeedDir(logged, dir, state), { files: 0, waiting: 1 });
  t.is(waitingLines().length, 2, "logged again: it grew, and is still not complete");
  t.true((await list(dir)).includes("statement.xml"));
  t.deepEqual(await list(join(dir, "failed")), []);

  await writeSettled(path, full);
  t.like(await scanBankFeedDir(logged, dir, state), { files: 1, failedFiles: 0, waiting: 0, imported: 2 });
  t.is(await transfersWith(["CAMTDIR1", "CAMTDIR2"]), 2);
  t.true((await list(join(dir, "imported"))).some((f) => f.endsWith("-statement.xml")));
});

test.serial("an .xml file is imported as camt.053 or camt.054 by its document's namespace", async (t) => {
  const dir = await freshDir("camt-kinds");
  const iban = await receivingIban();
  await writeSettled(join(dir, "statement.xml"), camtDocument(iban, [{ amount: 4_100, ref: "KIND053", text: "EKSTRE" }], "053"));
  await writeSettled(join(dir, "notification.xml"), camtDocument(iban, [{ amount: 4_200, ref: "KIND054", text: "BİLDİRİM" }], "054"));
  t.like(await scanBankFeedDir(ctx, dir), { files: 2, failedFiles: 0 });
  const sources = await ctx.db("incoming_transfers").whereIn("bank_transaction_id", ["KIND053", "KIND054"]).orderBy("bank_transaction_id").select<Array<{ bank_transaction_id: string; source: string }>>("bank_transaction_id", "source");
  t.deepEqual(
    sources.map((r) => [r.bank_transaction_id, r.source]),
    [
      ["KIND053", "camt053"],
      ["KIND054", "camt054"],
    ],
  );
});

test.serial("an MT940 file cut inside a statement waits, and is imported once its statement is closed", async (t) => {
  const dir = await freshDir("incomplete-mt940");
  const full = statement(await receivingIban(), [
    { amount: 5_100, txId: "MTCUT1", text: "ODEME 1" },
    { amount: 5_200, txId: "MTCUT2", text: "ODEME 2" },
  ]);
  const path = join(dir, "statement.sta");
  const state = newDirScanState();
  await writeSettled(path, full.slice(0, full.indexOf(":62F:")));
  t.like(await scanBankFeedDir(ctx, dir, state), { files: 0, failedFiles: 0, waiting: 1 });
  t.true((await list(dir)).includes("statement.sta"));
  t.deepEqual(await list(join(dir, "failed")), []);

  await writeSettled(path, full);
  t.like(await scanBankFeedDir(ctx, dir, state), { files: 1, failedFiles: 0, waiting: 0, imported: 2 });
  t.is(await transfersWith(["MTCUT1", "MTCUT2"]), 2);
});

test.serial("a claim older than BANK_FEED_CLAIM_TIMEOUT is taken back and imported once; a fresh claim, and a file not named as a claim, are left alone", async (t) => {
  const dir = await freshDir("abandoned-claims");
  const processing = join(dir, "processing");
  await mkdir(processing);
  const iban = await receivingIban();
  const stale = `${claimStamp(ctx.config.BANK_FEED_CLAIM_TIMEOUT + 60_000)}-4242-1a2b3c4d-stale.sta`;
  const fresh = `${claimStamp(60_000)}-4242-5e6f7a8b-fresh.sta`;
  await writeSettled(join(processing, stale), statement(iban, [{ amount: 6_100, txId: "STALE1", text: "ODEME" }]));
  await writeSettled(join(processing, fresh), statement(iban, [{ amount: 6_200, txId: "FRESH1", text: "ODEME" }]));
  await writeSettled(join(processing, "copied-by-hand.sta"), statement(iban, [{ amount: 6_300, txId: "BYHAND1", text: "ODEME" }]));

  const { ctx: logged, logs } = withLogs();
  const state = newDirScanState();
  t.like(await scanBankFeedDir(logged, dir, state), { reclaimed: 1, files: 1, imported: 1 });
  t.like(await scanBankFeedDir(logged, dir, state), { reclaimed: 0, files: 0 });
  t.is(await transfersWith(["STALE1"]), 1);
  t.is(await transfersWith(["FRESH1", "BYHAND1"]), 0);
  t.deepEqual(
    (await list(join(dir, "imported"))).map((f) => f.replace(/^\d{8}T\d{9}Z-/, "")),
    ["stale.sta"],
  );
  t.deepEqual((await list(processing)).sort(), [fresh, "copied-by-hand.sta"].sort());
  t.is(logs.filter((l) => l.file === "copied-by-hand.sta").length, 1, "the stray file is logged once");
  t.is(logs.filter((l) => String(l.msg).startsWith("bank feed directory: a claim older than BANK_FEED_CLAIM_TIMEOUT was taken back")).length, 1);

  // Its time comes: taken back too.
  clock.advance(ctx.config.BANK_FEED_CLAIM_TIMEOUT);
  try {
    t.like(await scanBankFeedDir(logged, dir, state), { reclaimed: 1, files: 1 });
  } finally {
    clock.advance(-ctx.config.BANK_FEED_CLAIM_TIMEOUT);
  }
  t.is(await transfersWith(["FRESH1"]), 1);
});

test.serial("replicas racing to take back one abandoned claim: the rename decides, the loser's miss is no error, the file is imported once", async (t) => {
  const dir = await freshDir("claim-race");
  const processing = join(dir, "processing");
  await mkdir(processing);
  const iban = await receivingIban();
  for (let i = 0; i < 4; i++) {
    await writeSettled(join(processing, `${claimStamp(ctx.config.BANK_FEED_CLAIM_TIMEOUT * 2)}-4242-0000000${i}-race-${i}.sta`), statement(iban, [{ amount: 7_000 + i, txId: `TAKEBACK${i}`, text: "ODEME" }]));
  }
  const { ctx: logged, logs } = withLogs();
  const results = await Promise.all([scanBankFeedDir(logged, dir, newDirScanState()), scanBankFeedDir(logged, dir, newDirScanState()), scanBankFeedDir(logged, dir, newDirScanState())]);
  t.is(results.reduce((sum, c) => sum + c.reclaimed, 0), 4, "each claim taken back by one replica");
  t.is(results.reduce((sum, c) => sum + c.files, 0), 4);
  t.is(results.reduce((sum, c) => sum + c.duplicates + c.retried + c.failedFiles, 0), 0);
  t.is(await transfersWith([0, 1, 2, 3].map((i) => `TAKEBACK${i}`)), 4);
  t.deepEqual(await list(processing), []);
  t.is((await list(join(dir, "imported"))).length, 4);
  t.deepEqual(
    logs.filter((l) => l.level !== undefined && Number(l.level) >= 50),
    [],
    "no errors",
  );
});

test.serial("a refused file still goes to failed/ with its .error.txt", async (t) => {
  const dir = await freshDir("refused-camt");
  await writeSettled(join(dir, "broken.xml"), `<?xml version="1.0"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt><Ntry/></Stmt></BkToCstmrStmt></Document>`);
  t.like(await scanBankFeedDir(ctx, dir), { failedFiles: 1, files: 0 });
  const failed = await list(join(dir, "failed"));
  const moved = failed.find((f) => f.endsWith("-broken.xml"))!;
  t.truthy(moved);
  t.regex(await readFile(join(dir, "failed", `${moved}.error.txt`), "utf8"), /broken\.xml: .*camt\.053\.001\.02: line 2: statement 1 \(Id missing\): Stmt\/Id is missing/);
});
