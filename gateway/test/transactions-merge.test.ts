import test from "ava";
import { seededRandom } from "@payments/testing";
import type { TransactionRecord } from "@payments/records";
import { ApiError } from "../src/errors.js";
import { decodeMergedCursor, encodeMergedCursor, mergedPage, newerFirst, type ListFilter, type TransactionSource } from "../src/routes/transactions.js";

/* The merge of several newest-first sources into one listing, over in-memory sources with keyset cursors like the services'. */

type Item = { transactionId: string; createdAt: string; status: string };

function fakeSource(items: Item[], statuses: readonly string[]): TransactionSource & { calls: number } {
  const sorted = [...items].sort((a, b) => newerFirst(a as TransactionRecord, b as TransactionRecord));
  const source = {
    statuses,
    calls: 0,
    async list(filter: ListFilter) {
      source.calls += 1;
      let rows = sorted.filter((i) => filter.status === undefined || i.status === filter.status);
      if (filter.cursor) {
        const [at, id] = JSON.parse(filter.cursor) as [string, string];
        rows = rows.filter((i) => i.createdAt < at || (i.createdAt === at && i.transactionId < id));
      }
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        items: page as unknown as TransactionRecord[],
        nextCursor: rows.length > filter.limit && last ? JSON.stringify([last.createdAt, last.transactionId]) : null,
      };
    },
  };
  return source;
}


function items(prefix: string, count: number, next: () => number, statuses: readonly string[]): Item[] {
  return Array.from({ length: count }, (_, i) => ({
    transactionId: `${prefix}_${String(i).padStart(3, "0")}`,
    // Few distinct milliseconds, so ties across and within sources are common.
    createdAt: new Date(Date.UTC(2026, 10, 22, 10, 0, Math.floor(next() * 8))).toISOString(),
    status: statuses[Math.floor(next() * statuses.length)]!,
  }));
}

async function walkAll(sources: Record<string, TransactionSource>, filter: Omit<ListFilter, "cursor">): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await mergedPage(sources, { ...filter, cursor });
    pages += 1;
    if (page.items.length > filter.limit) throw new Error("page too long");
    ids.push(...page.items.map((i) => i.transactionId));
    if (page.nextCursor === null) return { ids, pages };
    if (page.items.length === 0) throw new Error("an empty page with a next cursor");
    cursor = page.nextCursor;
    if (pages > 1000) throw new Error("no end");
  }
}

const D = ["pending", "completed", "failed", "expired", "cancelled"] as const;
const W = ["pending", "processing", "completed", "failed", "cancelled"] as const;

test("every page size walks every item once, newest first, whatever the mix and the ties", async (t) => {
  for (let seed = 1; seed <= 25; seed++) {
    const next = seededRandom(seed);
    const deposits = items("dep", Math.floor(next() * 30), next, D);
    const withdrawals = items("wdr", Math.floor(next() * 30), next, W);
    const expected = [...deposits, ...withdrawals].sort((a, b) => newerFirst(a as TransactionRecord, b as TransactionRecord)).map((i) => i.transactionId);
    for (const limit of [1, 2, 3, 7, 20, 100]) {
      const sources = { deposit: fakeSource(deposits, D), withdrawal: fakeSource(withdrawals, W) };
      const walked = await walkAll(sources, { merchantId: "m", limit });
      t.deepEqual(walked.ids, expected, `seed ${seed}, limit ${limit}`);
      // At most two calls per source per page: the page, and the position after the items taken.
      t.true(sources.deposit.calls + sources.withdrawal.calls <= 4 * walked.pages);
    }
  }
});

test("a status only one kind has lists that kind alone, without asking the other", async (t) => {
  const next = seededRandom(7);
  const deposits = items("dep", 20, next, D);
  const withdrawals = items("wdr", 20, next, W);
  const sources = { deposit: fakeSource(deposits, D), withdrawal: fakeSource(withdrawals, W) };
  const walked = await walkAll(sources, { merchantId: "m", limit: 3, status: "processing" });
  t.deepEqual(
    walked.ids,
    withdrawals
      .filter((i) => i.status === "processing")
      .sort((a, b) => newerFirst(a as TransactionRecord, b as TransactionRecord))
      .map((i) => i.transactionId),
  );
  t.is(sources.deposit.calls, 0);

  const shared = await walkAll({ deposit: fakeSource(deposits, D), withdrawal: fakeSource(withdrawals, W) }, { merchantId: "m", limit: 4, status: "cancelled" });
  t.deepEqual(
    shared.ids,
    [...deposits, ...withdrawals]
      .filter((i) => i.status === "cancelled")
      .sort((a, b) => newerFirst(a as TransactionRecord, b as TransactionRecord))
      .map((i) => i.transactionId),
  );
});

test("nothing at all is one empty page with nextCursor null", async (t) => {
  const page = await mergedPage({ deposit: fakeSource([], D), withdrawal: fakeSource([], W) }, { merchantId: "m", limit: 20 });
  t.deepEqual(page, { items: [], nextCursor: null });
});

test("the merged cursor is base64url JSON of each source's position; anything else is refused naming cursor", async (t) => {
  const cursor = encodeMergedCursor({ deposit: "abc", withdrawal: null });
  t.regex(cursor, /^[A-Za-z0-9_-]+$/);
  t.deepEqual(decodeMergedCursor(cursor), { deposit: "abc", withdrawal: null });
  for (const bad of ["", "x", "!!", encodeMergedCursor({}), Buffer.from('{"refund":""}').toString("base64url"), Buffer.from('{"deposit":1}').toString("base64url"), Buffer.from("[]").toString("base64url")]) {
    t.is(decodeMergedCursor(bad), undefined, bad);
  }
  const err = await t.throwsAsync(mergedPage({ deposit: fakeSource([], D) }, { merchantId: "m", limit: 1, cursor: "nope" }));
  t.true(err instanceof ApiError);
  t.like(err, { status: 400, code: "VALIDATION_ERROR", message: "cursor: is not a cursor from a previous response" });
});
