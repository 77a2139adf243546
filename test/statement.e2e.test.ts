import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { parse as parseCsv_ } from "csv-parse/sync";
import { PaymentsClient, PaymentsError, type Statement } from "../packages/sdk/src/index.js";
import { newId, openDatabase } from "@payments/kit";
import { eventually, spawnAllInOne, type AllInOneProcess } from "@payments/testing";
import { checkOpenApiResponse } from "./openapi-check.js";
import { isInstant, xlsxRows } from "./xlsx-file.js";

// GET /v1/statement end to end on `pnpm start` (SQLite, in-process bus, sandbox bank): a
// sandbox merchant's deposits paid, a withdrawal paid out by the sandbox bank, then the
// statement through the SDK, as JSON and as CSV, matching the balance and each other; the
// files an accountant opens (an XLSX, a Turkish CSV) through SDK statementFile, read with
// parsers that are not their writers; and a day of more than 10,000 ledger entries, which the
// gateway streams page after page.
let app: AllInOneProcess;
// The data folder is the test's, so it can write ledger rows into the payout service's SQLite file.
const dataDir = mkdtempSync(join(tmpdir(), "statement-e2e-"));

test.before(async () => {
  app = await spawnAllInOne({ SANDBOX_PAYOUT_DELAY: "50ms", PAYOUT_WORKER_INTERVAL: "100ms", DATA_DIR: dataDir });
});
test.after.always(async () => {
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (app as typeof app | undefined)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function newMerchant(name: string): Promise<{ merchantId: string; client: PaymentsClient }> {
  const made = await app.cli(["merchant", "create", "--name", name, "--sandbox", "--ip", "127.0.0.1,::1", "--json"]);
  if (made.code !== 0) throw new Error(made.stderr);
  const creds = JSON.parse(made.stdout.trim()) as { merchantId: string; apiKey: string; apiSecret: string };
  return { merchantId: creds.merchantId, client: new PaymentsClient({ baseUrl: app.gatewayUrl, apiKey: creds.apiKey, apiSecret: creds.apiSecret }) };
}

/** RFC 4180 rows of a CSV without quoted line breaks (what the statement writes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split("\r\n").slice(0, -1)) {
    const cells: string[] = [];
    let cell = "";
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quoted && c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = !quoted;
      else if (c === "," && !quoted) {
        cells.push(cell);
        cell = "";
      } else cell += c;
    }
    cells.push(cell);
    rows.push(cells);
  }
  return rows;
}

/**
 * A day of a sandbox merchant's money: two deposits paid (150,050 and 20,000 kuruş; the
 * second's processId starts with `=`, a formula to a spreadsheet), then a withdrawal of 70,000
 * paid out by the sandbox bank. Closing balance 100,050.
 */
async function paidDay(client: PaymentsClient, tag: string, customer: { id: string; name: string; username: string }) {
  const first = await client.createDeposit({ processId: `${tag}-order-1`, amount: 150_050, customer });
  const second = await client.createDeposit({ processId: `=${tag}-order-2`, amount: 20_000, customer });
  await client.sandbox.payDeposit(first.transactionId);
  await client.sandbox.payDeposit(second.transactionId);
  await eventually(async () => ((await client.balance()).balances.find((b) => b.currency === "TRY")?.available ?? 0) === 170_050, "both credits", 15_000);
  const withdrawal = await client.createWithdrawal({ processId: `${tag}-payout-1`, amount: 70_000, accountName: customer.name, iban: "TR320010009999901234567890", userId: customer.id, userName: customer.username, name: customer.name });
  await eventually(async () => (await client.getWithdrawal(withdrawal.transactionId)).status === "completed", "the payout", 15_000);
  return { first, second, withdrawal };
}

test("deposits and a withdrawal show in the statement, JSON and CSV alike, and add up to the balance", async (t) => {
  const { client } = await newMerchant("Statement Shop");
  const { first, second, withdrawal } = await paidDay(client, "st", { id: "cus_1", name: "Elif Şahin", username: "elif" });

  const today = new Date().toISOString().slice(0, 10);
  const statement: Statement = await client.statement({ currency: "TRY", from: today, to: today });
  t.like(statement, { currency: "TRY", from: today, to: today, openingBalance: 0, closingBalance: 100_050 });
  t.deepEqual(
    statement.movements.map((m) => [m.kind, m.amount, m.balanceAfter, m.transactionId, m.processId]),
    [
      ["deposit_credit", 150_050, 150_050, first.transactionId, "st-order-1"],
      ["deposit_credit", 20_000, 170_050, second.transactionId, "=st-order-2"],
      ["withdrawal_hold", 0, 170_050, withdrawal.transactionId, "st-payout-1"],
      ["withdrawal_debit", -70_000, 100_050, withdrawal.transactionId, "st-payout-1"],
    ],
  );
  t.is(statement.openingBalance + statement.movements.reduce((sum, m) => sum + m.amount, 0), statement.closingBalance);
  const balance = (await client.balance()).balances.find((b) => b.currency === "TRY")!;
  t.is(statement.closingBalance, balance.available + balance.held, "the closing balance is GET /v1/balance's available + held");

  const csv = await client.statementCsv({ currency: "TRY", from: today, to: today });
  checkOpenApiResponse("GET", `/v1/statement?format=csv`, 200, csv, "text/csv; charset=utf-8");
  const rows = parseCsv(csv);
  t.is(rows[0]![2], "Amount (kuruş)");
  t.deepEqual(rows[1]!.slice(1, 6), ["opening_balance", "", "", "0", "0.00"]);
  t.deepEqual(rows.at(-1)!.slice(1, 6), ["closing_balance", "", "", "100050", "1000.50"]);
  const lines = rows.slice(2, -1);
  t.deepEqual(
    lines.map((r) => [r[1], Number(r[2]), r[3], Number(r[4]), r[5], r[6], r[7]]),
    statement.movements.map((m) => [m.kind, m.amount, (m.amount / 100).toFixed(2), m.balanceAfter, (m.balanceAfter / 100).toFixed(2), m.transactionId, m.processId?.startsWith("=") ? `'${m.processId}` : m.processId]),
  );
});

/** A Turkish CSV amount (`-700,00`) in kuruş, exactly. */
function turkishKurus(cell: string): number {
  const match = /^(-?)(\d+),(\d{2})$/.exec(cell);
  if (!match) throw new Error(`${JSON.stringify(cell)} is not a Turkish amount`);
  const kurus = Number(match[2]) * 100 + Number(match[3]);
  return match[1] === "-" ? -kurus : kurus;
}

test("the statement as the files an accountant opens, through the gateway: an XLSX and a Turkish CSV (SDK statementFile) add up to the JSON statement", async (t) => {
  const { client } = await newMerchant("Statement Files Shop");
  await paidDay(client, "files", { id: "cus_2", name: "Çağla Öztürk", username: "cagla" });

  const today = new Date().toISOString().slice(0, 10);
  const query = { currency: "TRY", from: today, to: today };
  const statement = await client.statement(query);
  t.is(statement.movements.length, 4);
  t.is(statement.closingBalance, 100_050);

  // XLSX: typed cells, the same movements, adding up.
  const xlsx = await client.statementFile({ ...query, format: "xlsx" });
  t.is(xlsx.fileName, `statement-TRY-${today}-${today}.xlsx`);
  t.is(xlsx.contentType, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
  checkOpenApiResponse("GET", "/v1/statement?format=xlsx", 200, {}, xlsx.contentType);
  const sheet = await xlsxRows(xlsx.bytes);
  t.deepEqual(sheet[0], ["Time (UTC)", "Kind", "Amount (kuruş)", "Amount (TRY)", "Balance after (kuruş)", "Balance after (TRY)", "Transaction ID", "Process ID"]);
  t.deepEqual(sheet[1], [new Date(`${today}T00:00:00.000Z`), "opening_balance", null, null, 0, 0, null, null]);
  t.deepEqual(
    sheet.slice(2, -1).map((r) => r.slice(1)),
    statement.movements.map((m) => [m.kind, m.amount, m.amount / 100, m.balanceAfter, m.balanceAfter / 100, m.transactionId, m.processId]),
  );
  t.true(
    sheet.slice(2, -1).every((r, i) => isInstant(r[0], statement.movements[i]!.at)),
    "each movement's time a date cell",
  );
  const closingRow = sheet.at(-1)!;
  t.deepEqual(closingRow.slice(1, 6), ["closing_balance", null, null, statement.closingBalance, statement.closingBalance / 100]);
  t.is(sheet.slice(2, -1).reduce<number>((sum, r) => sum + Number(r[2]), Number(sheet[1]![4])), closingRow[4] as number, "the sheet adds up");

  // Turkish CSV: the byte-order mark, `;`, comma decimals that convert back exactly.
  const csv = await client.statementFile({ ...query, format: "csv", locale: "tr" });
  t.is(csv.fileName, `statement-TRY-${today}-${today}.csv`);
  t.is(csv.contentType, "text/csv; charset=utf-8");
  t.deepEqual([...csv.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  const rows = parseCsv_(Buffer.from(csv.bytes), { bom: true, delimiter: ";" });
  t.deepEqual(rows[0], ["Zaman (UTC)", "Tür", "Tutar (kuruş)", "Tutar (TRY)", "İşlem sonrası bakiye (kuruş)", "İşlem sonrası bakiye (TRY)", "İşlem numarası", "Referans (processId)"]);
  t.deepEqual(rows[1]!.slice(1, 6), ["opening_balance", "", "", "0", "0,00"]);
  t.deepEqual(
    rows.slice(2, -1).map((r) => [r[0], r[1], Number(r[2]), turkishKurus(r[3]!), Number(r[4]), turkishKurus(r[5]!), r[6], r[7]]),
    statement.movements.map((m) => [m.at, m.kind, m.amount, m.amount, m.balanceAfter, m.balanceAfter, m.transactionId, m.processId?.startsWith("=") ? `'${m.processId}` : m.processId]),
  );
  t.deepEqual(rows.at(-1)!.slice(1, 6), ["closing_balance", "", "", "100050", "1000,50"]);
  t.is(rows.slice(2, -1).reduce((sum, r) => sum + turkishKurus(r[3]!), turkishKurus(rows[1]![5]!)), turkishKurus(rows.at(-1)![5]!), "the CSV adds up");

  // A refusal is still the JSON envelope, a PaymentsError, not a file.
  const refused = await t.throwsAsync(client.statementFile({ ...query, currency: "XXX", format: "xlsx", locale: "tr" }), { instanceOf: PaymentsError });
  t.like(refused, { status: 400, code: "VALIDATION_ERROR" });
});

test("a day of more than 10,000 movements comes whole through the gateway, JSON and CSV: every movement once, in order, each running balance right", async (t) => {
  const { merchantId, client } = await newMerchant("Busy Shop");
  const day = Date.parse("2025-06-01T00:00:00.000Z");
  const LINES = 10_250;
  // Written straight into the payout service's ledger (the service posts one entry per
  // transaction; ten thousand deposits through the API would take minutes).
  const db = openDatabase({ sqliteFile: join(dataDir, "payout.sqlite") });
  const entry = (kind: string, available: number, held: number, at: number, transactionId = newId(kind === "adjustment" ? "adj" : "dep")) => ({
    id: newId("led"),
    merchant_id: merchantId,
    currency: "TRY",
    kind,
    available_delta: available,
    held_delta: held,
    transaction_id: transactionId,
    reason: null,
    process_id: kind === "deposit_credit" ? `busy-${at}` : null,
    created_at: at,
  });
  const rows = [entry("adjustment", 500_000, 0, day - 3_600_000)];
  for (let i = 0; i < LINES; i++) {
    const at = day + Math.floor((i * 86_000_000) / LINES);
    rows.push(i % 5 === 4 ? entry("adjustment", -(1 + (i % 300)), 0, at) : entry("deposit_credit", 1_000 + (i % 1_000), 0, at));
  }
  rows.push(entry("adjustment", 42, 0, day + 86_400_000));
  try {
    await db.transaction((trx) => db.batchInsert("ledger_entries", rows, 80).transacting(trx));
  } finally {
    await db.destroy();
  }
  const inDay = rows.slice(1, 1 + LINES);
  let running = 500_000;
  const expected = inDay.map((r) => [r.transaction_id, r.available_delta, (running += r.available_delta)] as const);

  const statement = await client.statement({ currency: "TRY", from: "2025-06-01", to: "2025-06-01" });
  t.is(statement.openingBalance, 500_000);
  t.is(statement.movements.length, LINES);
  t.deepEqual(
    statement.movements.map((m) => [m.transactionId, m.amount, m.balanceAfter] as const),
    expected,
  );
  t.is(statement.closingBalance, running);

  const csv = await client.statementCsv({ currency: "TRY", from: "2025-06-01", to: "2025-06-01" });
  const csvRows = parseCsv(csv);
  t.is(csvRows.length, LINES + 3, "header, opening, every movement, closing");
  t.deepEqual(csvRows[1]!.slice(1, 5), ["opening_balance", "", "", "500000"]);
  t.deepEqual(
    csvRows.slice(2, -1).map((r) => [r[6], Number(r[2]), Number(r[4])] as const),
    expected,
  );
  t.deepEqual(csvRows.at(-1)!.slice(1, 5), ["closing_balance", "", "", String(running)]);
});
