import { mkdtempSync, rmSync } from "node:fs";
import { readdir, readFile, rename, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { merchantModule } from "@payments/merchant-service";
import { createServiceClient, startServices, type RunningServices } from "@payments/kit";
import { addTestReceivingAccounts, eventually, manualClock } from "@payments/kit/testing";
import { scanBankFeedDir } from "../src/bank-feed-dir.js";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";

// BANK_FEED_DIR (src/bank-feed-dir.ts): the deposit service's job imports statement files
// dropped into a directory, each once, and files them under imported/ or failed/.

const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const root = mkdtempSync(join(tmpdir(), "deposit-feed-dir-"));
const feedDir = join(root, "drop");
let running: RunningServices;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchantId: string;
let ctx: DepositContext;

test.before(async () => {
  running = await startServices([merchantModule, bankCatalogModule, depositModule], {
    mode: "all-in-one",
    clock,
    env: { DATA_DIR: root, GRPC_PORT: "0", LOG_LEVEL: "warn", MASTER_KEY: "cd".repeat(32), BANK_FEED_DIR: feedDir, BANK_FEED_INTERVAL: "50ms" },
  });
  deposits = createServiceClient(DepositService, running.server.url);
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, running.server.url));
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
const transfersWith = async (ids: string[]) => Number(((await ctx.db("incoming_transfers").whereIn("bank_transaction_id", ids).count({ n: "*" })) as Array<{ n: number }>)[0]!.n);

test.serial("a dropped statement crediting a pending deposit completes it and is moved to imported/; the same file again changes nothing", async (t) => {
  const deposit = await newDeposit("dir-1");
  const content = statement(deposit.assignedAccount!.iban, [{ amount: 10_000, txId: "DIRTX1", text: `ODEME REF ${deposit.reference}` }]);
  await drop(feedDir, "statement-1.sta", content);

  await eventually(async () => (await getDeposit(deposit.id)).status === DepositStatus.COMPLETED, "the deposit to complete");
  await eventually(async () => (await list(join(feedDir, "imported"))).some((f) => f.endsWith("-statement-1.sta")), "the file in imported/");
  t.false((await list(feedDir)).includes("statement-1.sta"));
  t.deepEqual(await list(join(feedDir, "processing")), []);
  t.is(await readFile(join(feedDir, "imported", (await list(join(feedDir, "imported")))[0]!), "utf8"), content, "kept as it came");
  const completed = await getDeposit(deposit.id);

  await drop(feedDir, "statement-1.sta", content);
  await eventually(async () => (await list(join(feedDir, "imported"))).filter((f) => f.includes("statement-1.sta")).length === 2, "the second copy in imported/");
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
  const { accounts } = await createServiceClient(BankCatalogService, running.server.url).listReceivingAccounts({});
  const iban = accounts[0]!.iban;
  const ids: string[] = [];
  const { mkdir } = await import("node:fs/promises");
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
