import { createServiceClient, eventually } from "@payments/testing";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, WithdrawalStatus } from "@payments/contracts/payout";
import { newId, type RunningServices } from "@payments/kit";
import { cli, closedPort, singleJson } from "./capture.js";

// Every operator list pages the same way: one page with the "more: add --cursor" hint,
// --cursor continuing it, --all walking every page (table rows as pages arrive; with --json one
// document of every item). In-process against the real merchant, bank-catalog, deposit, payout
// and callback-sender services, all-in-one on SQLite in a temporary directory of its own, so
// each list holds exactly what this file made: more items than a small page.

const STAYS_PROCESSING_IBAN = "TR830006200000000000000003";
const PAID_IBAN = "TR320010009999901234567890";

let running: RunningServices | undefined;
let dataDir: string;
let url: string;
let merchantId: string;

/** What each list must show, by id, as this file made it. */
const made = { deposits: [] as string[], rejected: [] as string[], withdrawals: [] as string[], awaiting: [] as string[], returns: [] as string[], ledger: 0, events: 0, unmatched: [] as string[], review: [] as string[] };

function dbOf(service: string) {
  const ctx = running?.contexts.get(service);
  if (!ctx) throw new Error(`no ${service} service running`);
  return ctx.db;
}

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-paging-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"], {
    env: {
      DATA_DIR: dataDir,
      MASTER_KEY: "ab".repeat(32),
      LOG_LEVEL: "error",
      SHUTDOWN_GRACE: "1s",
      SUPPORTED_CURRENCIES: "TRY,EUR",
      SANDBOX_PAYOUT_DELAY: "10ms",
      PAYOUT_WORKER_INTERVAL: "50ms",
      CALLBACK_POLL_INTERVAL: "50ms",
    },
    receivingAccounts: true,
  });
  url = running.server.url;
  const merchants = createServiceClient(MerchantService, url);
  const deposits = createServiceClient(DepositService, url);
  const payouts = createServiceClient(PayoutService, url);
  const callbacks = createServiceClient(CallbackService, url);
  merchantId = (await merchants.createMerchant({ name: "Paging Shop", sandbox: true })).merchant!.id;

  // 23 deposits, 12 of them rejected.
  for (let i = 0; i < 23; i++) {
    const { deposit } = await deposits.createDeposit({ merchantId, processId: `page-dep-${i}`, amount: BigInt(10_000 + i), customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
    made.deposits.push(deposit!.id);
    if (i < 12) {
      await deposits.rejectDeposit({ depositId: deposit!.id, reason: "test" });
      made.rejected.push(deposit!.id);
    }
  }

  // Ledger entries in two currencies: 9 adjustments in TRY, 8 in EUR, then a hold per withdrawal.
  for (let i = 0; i < 9; i++) await payouts.adjustBalance({ merchantId, amount: 100_000n, reason: `funds ${i}` });
  for (let i = 0; i < 8; i++) await payouts.adjustBalance({ merchantId, amount: 5_000n, currency: "EUR", reason: `eur ${i}` });
  // 13 withdrawals; the sandbox bank leaves 5 of them processing for an operator.
  for (let i = 0; i < 13; i++) {
    const awaiting = i % 3 === 0;
    const { withdrawal } = await payouts.createWithdrawal({
      merchantId,
      processId: `page-wdr-${i}`,
      amount: 1_000n,
      accountName: "Ayşe Yılmaz",
      iban: awaiting ? STAYS_PROCESSING_IBAN : PAID_IBAN,
      userId: "u",
      userName: "ayse",
      name: "Ayşe Yılmaz",
    });
    made.withdrawals.push(withdrawal!.id);
    if (awaiting) made.awaiting.push(withdrawal!.id);
  }
  // Holds, plus a settlement for each one the sandbox bank paid.
  made.ledger = 9 + 8 + 13 + (13 - made.awaiting.length);
  // A callback event per status change: each rejection, each withdrawal taken to processing, each paid one.
  made.events = 12 + 13 + (13 - made.awaiting.length);

  // 14 transfer returns, as the deposit service would ask for them.
  for (let i = 0; i < 14; i++) {
    const { transferReturn } = await payouts.createTransferReturn({ transferId: newId("trf"), iban: PAID_IBAN, recipientName: "Mehmet Kaya", amount: 700n, sandbox: true, reason: "no such order", actor: "ayse" });
    made.returns.push(transferReturn!.id);
  }

  // Open transfers written straight to the deposit service's table: 11 unmatched, 7 in review, and settled ones never listed.
  const kinds = [...Array<string>(11).fill("unmatched"), ...Array<string>(7).fill("review"), "matched", "returned"];
  const reportedAt = Date.now() - 3_600_000;
  const rows = kinds.map((status, i) => ({
    id: newId("trf"),
    iban: "TR330006100519786457841326",
    bank_transaction_id: `BTX-CLI-PAGE-${i}`,
    amount: 2_000 + i,
    currency: "TRY",
    sender_name: "Mehmet Kaya",
    reference: "",
    unmatched_reason: status === "matched" ? null : "no pending deposit is assigned to this account",
    // Pairs share a millisecond: the id orders them.
    reported_at: reportedAt + Math.floor(i / 2),
    status,
  }));
  await dbOf("deposit").batchInsert("incoming_transfers", rows, 20);
  made.unmatched = rows.filter((r) => r.status === "unmatched").map((r) => r.id);
  made.review = rows.filter((r) => r.status === "review").map((r) => r.id);

  await eventually(
    async () => {
      const page = await payouts.listWithdrawals({ merchantId, awaitingOperator: true, limit: 100 });
      return page.withdrawals.length === made.awaiting.length;
    },
    "the withdrawals awaiting an operator",
    20_000,
  );
  await eventually(
    async () => {
      const page = await payouts.listWithdrawals({ merchantId, status: WithdrawalStatus.COMPLETED, limit: 100 });
      return page.withdrawals.length === made.withdrawals.length - made.awaiting.length;
    },
    "the paid withdrawals",
    20_000,
  );
  await eventually(async () => (await callbacks.listEvents({ merchantId, limit: 100 })).events.length === made.events, "the callback events", 20_000);
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const run = (args: readonly string[]) => cli([...args, "--grpc-url", url]);

interface ListCase {
  /** The command and its filters. */
  args: string[];
  /** The JSON array's key. */
  key: string;
  /** The ids the list must hold (in any order), or how many when they are the services'. */
  expect: () => string[] | number;
  /** The "more" hint's words. */
  more: string;
}

const cases: ListCase[] = [
  { args: ["deposit", "list", "--merchant", "MERCHANT"], key: "deposits", expect: () => made.deposits, more: "More deposits" },
  { args: ["withdrawal", "list", "--merchant", "MERCHANT"], key: "withdrawals", expect: () => made.withdrawals, more: "More withdrawals" },
  { args: ["withdrawal", "list", "--awaiting-operator"], key: "withdrawals", expect: () => made.awaiting, more: "More withdrawals" },
  // The search filters page the same way inside what they select.
  { args: ["deposit", "list", "--merchant", "MERCHANT", "--customer", "c", "--customer-name", "Ayşe", "--status", "failed"], key: "deposits", expect: () => made.rejected, more: "More deposits" },
  { args: ["withdrawal", "list", "--iban", STAYS_PROCESSING_IBAN.toLowerCase(), "--holder", "Ayşe", "--amount", "1000"], key: "withdrawals", expect: () => made.awaiting, more: "More withdrawals" },
  { args: ["transfer-return", "list"], key: "transferReturns", expect: () => made.returns, more: "More transfer returns" },
  { args: ["events", "list", "--merchant", "MERCHANT"], key: "events", expect: () => made.events, more: "More events" },
  { args: ["balance", "ledger", "--merchant", "MERCHANT"], key: "entries", expect: () => made.ledger, more: "More entries" },
  { args: ["transfer", "unmatched"], key: "transfers", expect: () => [...made.unmatched, ...made.review], more: "More open transfers" },
  { args: ["transfer", "unmatched", "--review"], key: "transfers", expect: () => made.review, more: "More transfers in review" },
];

const argsOf = (c: ListCase) => c.args.map((a) => (a === "MERCHANT" ? merchantId : a));
const ids = (doc: unknown, key: string) => ((doc as Record<string, Array<{ id: string }>>)[key] ?? []).map((item) => item.id);

for (const c of cases) {
  test.serial(`${c.args.filter((a) => a !== "MERCHANT").join(" ")}: page by page with --cursor every item once, and --all --json the same items in the same order in one document`, async (t) => {
    const walked: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const r = await run([...argsOf(c), "--limit", "2", ...(cursor ? ["--cursor", cursor] : []), "--json"]);
      t.is(r.code, 0, r.stderr);
      const doc = singleJson(r.stdout) as { nextCursor: string };
      const page = ids(doc, c.key);
      t.true(page.length <= 2);
      walked.push(...page);
      cursor = doc.nextCursor;
      pages++;
    } while (cursor !== "" && pages < 100);
    const expected = c.expect();
    t.is(walked.length, typeof expected === "number" ? expected : expected.length);
    t.is(new Set(walked).size, walked.length, "no item twice");
    if (typeof expected !== "number") t.deepEqual([...walked].sort(), [...expected].sort());
    t.true(pages > 2, "more than two pages");

    for (const limit of [[], ["--limit", "3"]]) {
      const all = await run([...argsOf(c), "--all", ...limit, "--json"]);
      t.is(all.code, 0, all.stderr);
      const doc = singleJson(all.stdout) as { nextCursor: string };
      t.deepEqual(ids(doc, c.key), walked, `--all ${limit.join(" ")}: every page's items, in order`);
      t.is(doc.nextCursor, "");
    }

    // --all from a printed cursor: the rest.
    const first = singleJson((await run([...argsOf(c), "--limit", "2", "--json"])).stdout) as { nextCursor: string };
    const rest = await run([...argsOf(c), "--all", "--cursor", first.nextCursor, "--json"]);
    t.deepEqual(ids(singleJson(rest.stdout), c.key), walked.slice(2));
  });

  test.serial(`${c.args.filter((a) => a !== "MERCHANT").join(" ")}: one page ends with the "${c.more}: add --cursor" hint that continues it; --all prints one table of every row and no hint`, async (t) => {
    const one = await run([...argsOf(c), "--limit", "4"]);
    t.is(one.code, 0, one.stderr);
    const lines = one.stdout.trimEnd().split("\n");
    t.is(lines.length, 1 + 4 + 2, "header, four rows, a blank line, the hint");
    const hint = new RegExp(`^${c.more}: add --cursor (\\S+)$`).exec(lines.at(-1)!);
    t.truthy(hint, lines.at(-1));
    const next = singleJson((await run([...argsOf(c), "--limit", "4", "--cursor", hint![1]!, "--json"])).stdout);
    const firstPage = singleJson((await run([...argsOf(c), "--limit", "8", "--json"])).stdout);
    t.deepEqual(ids(next, c.key), ids(firstPage, c.key).slice(4), "the printed cursor continues where the page ended");

    const all = await run([...argsOf(c), "--all", "--limit", "4"]);
    t.is(all.code, 0, all.stderr);
    const expected = c.expect();
    const count = typeof expected === "number" ? expected : expected.length;
    const tableLines = all.stdout.trimEnd().split("\n");
    t.is(tableLines.length, 1 + count, "the header once, then every row");
    t.is(tableLines.filter((l) => /^ID\s/.test(l)).length, 1, "one header");
    t.notRegex(all.stdout, /add --cursor/);
    // Rows of later pages line up under the header, as the first page's do.
    const header = tableLines[0]!;
    const second = header.indexOf(header.split(/\s{2,}/)[1]!);
    t.true(
      tableLines.every((l) => l[second - 1] === " " && l[second] !== " "),
      "the second column starts at the same place on every row",
    );
  });
}

test.serial("--all of an empty list prints its empty message; a cursor the service did not issue is VALIDATION_ERROR on cursor (exit 1)", async (t) => {
  const empty = await run(["withdrawal", "list", "--merchant", "mer_nobody", "--all"]);
  t.is(empty.code, 0, empty.stderr);
  t.is(empty.stdout, "No withdrawals.\n");
  const emptyJson = await run(["withdrawal", "list", "--merchant", "mer_nobody", "--all", "--json"]);
  t.deepEqual(singleJson(emptyJson.stdout), { withdrawals: [], nextCursor: "" });
  const noReview = await run(["transfer", "unmatched", "--review", "--older-than", "30d"]);
  t.is(noReview.stdout, "No transfers in review that old.\n");

  for (const args of [
    ["transfer", "unmatched", "--cursor", "nonsense"],
    ["deposit", "list", "--cursor", "nonsense", "--all"],
    ["balance", "ledger", "--merchant", merchantId, "--cursor", "nonsense"],
  ]) {
    const r = await run(args);
    t.is(r.code, 1, args.join(" "));
    t.regex(r.stderr, /^error: VALIDATION_ERROR: .*\(field: cursor\)/, args.join(" "));
  }
});

test("--cursor must not be empty and --limit keeps its bounds with --all (exit 2 before any call)", async (t) => {
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  for (const args of [
    ["transfer", "unmatched", "--cursor", ""],
    ["transfer", "unmatched", "--all", "--limit", "501"],
    ["withdrawal", "list", "--all", "--limit", "0"],
    ["events", "list", "--merchant", "m", "--cursor", " "],
    ["balance", "ledger", "--merchant", "m", "--all", "--limit", "501"],
    ["deposit", "list", "--all", "--limit", "101"],
    ["transfer-return", "list", "--all", "--cursor", ""],
  ]) {
    const r = await cli([...args, "--grpc-url", nowhere]);
    t.is(r.code, 2, args.join(" "));
    t.is(r.stdout, "");
    t.notRegex(r.stderr, /cannot reach/, args.join(" "));
  }
});
