import test from "ava";
import { PaymentsClient, type Statement } from "../packages/sdk/src/index.js";
import { runCli, spawnAllInOne, type AllInOneProcess } from "@payments/kit/testing";
import { checkOpenApiResponse } from "./openapi-check.js";

// GET /v1/statement end to end on `pnpm start` (SQLite, in-process bus, sandbox bank): a
// sandbox merchant's deposits paid, a withdrawal paid out by the sandbox bank, then the
// statement through the SDK, as JSON and as CSV, matching the balance and each other.
let app: AllInOneProcess;

test.before(async () => {
  app = await spawnAllInOne({ SANDBOX_PAYOUT_DELAY: "50ms", PAYOUT_WORKER_INTERVAL: "100ms" });
});
test.after.always(() => app?.stop());

/** RFC 4180 rows of a CSV without quoted line breaks (what the statement writes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split("\r\n").slice(0, -1)) {
    const cells: string[] = [];
    let cell = "";
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quoted && c === '"' && line[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = !quoted;
      else if (c === "," && !quoted) cells.push(cell), (cell = "");
      else cell += c;
    }
    cells.push(cell);
    rows.push(cells);
  }
  return rows;
}

test("deposits and a withdrawal show in the statement, JSON and CSV alike, and add up to the balance", async (t) => {
  const made = await runCli(["merchant", "create", "--name", "Statement Shop", "--sandbox", "--ip", "127.0.0.1,::1", "--json"], { GRPC_URL: app.grpcUrl });
  t.is(made.code, 0, made.stderr);
  const creds = JSON.parse(made.stdout.trim()) as { apiKey: string; apiSecret: string };
  const client = new PaymentsClient({ baseUrl: app.gatewayUrl, apiKey: creds.apiKey, apiSecret: creds.apiSecret });

  const customer = { id: "cus_1", name: "Elif Şahin", username: "elif" };
  const first = await client.createDeposit({ processId: "st-order-1", amount: 150_050, customer });
  const second = await client.createDeposit({ processId: "=st-order-2", amount: 20_000, customer });
  await client.sandbox.payDeposit(first.transactionId);
  await client.sandbox.payDeposit(second.transactionId);
  const waitFor = async (what: string, ok: () => Promise<boolean>) => {
    const deadline = Date.now() + 15_000;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await waitFor("both credits", async () => ((await client.balance()).balances.find((b) => b.currency === "TRY")?.available ?? 0) === 170_050);
  const withdrawal = await client.createWithdrawal({ processId: "st-payout-1", amount: 70_000, accountName: "Elif Şahin", iban: "TR320010009999901234567890", userId: "cus_1", userName: "elif", name: "Elif Şahin" });
  await waitFor("the payout", async () => (await client.getWithdrawal(withdrawal.transactionId)).status === "completed");

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
