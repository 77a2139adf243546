import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { DepositService, TransferStatus, type ListUnmatchedTransfersRequest } from "@payments/contracts/deposit";
import { encodeCursor, errorInfo, newId, type RunningServices } from "@payments/kit";
import { createServiceClient, createTestDatabase, manualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";

/*
 * ListUnmatchedTransfers pages the open-transfer queue by key, oldest first by
 * (reported_at, id), on SQLite and on MySQL: more transfers than a page, walked page by page,
 * give every open one exactly once and in order, whatever the filters; transfers settled
 * between pages do not make the walk skip or repeat the others; a cursor the listing did not
 * issue is refused.
 */

const NOW = Date.parse("2026-11-22T10:00:00.000Z");
const HOUR = 3_600_000;

type Request = Partial<Omit<ListUnmatchedTransfersRequest, "$typeName" | "$unknown">>;

interface Row {
  id: string;
  status: string;
  reported_at: number;
}

function storageSuite(storage: string, setup: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>): void {
  const clock = manualClock(new Date(NOW));
  let running: RunningServices | undefined;
  let cleanup: () => Promise<void> = async () => {};
  let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
  const rows: Row[] = [];

  test.before(async () => {
    const made = await setup();
    cleanup = made.cleanup;
    running = await startInProcess(["merchant", "bank-catalog", depositModule], {
      clock,
      env: { LOG_LEVEL: "warn", MASTER_KEY: "cd".repeat(32), ...made.env },
    });
    deposits = createServiceClient(DepositService, running.server.url);

    // 300 transfers written straight to the table: open ones of both kinds and settled ones
    // (never listed), over two days, many sharing a millisecond with one of the other status.
    const statuses = ["unmatched", "review", "unmatched", "matched", "review", "returned", "unmatched", "returning"];
    for (let i = 0; i < 300; i++) {
      rows.push({ id: newId("trf"), status: statuses[i % statuses.length]!, reported_at: NOW - 48 * HOUR + Math.floor(i / 3) * 30 * 60_000 });
    }
    const db = (running.contexts.get("deposit") as DepositContext).db;
    const records = rows.map((r, i) => ({
      id: r.id,
      iban: "TR330006100519786457841326",
      bank_transaction_id: `BTX-PAGE-${i}`,
      amount: 1_000 + i,
      currency: "TRY",
      sender_name: "Ayşe Yılmaz",
      reference: "",
      unmatched_reason: r.status === "matched" ? null : "no pending deposit is assigned to this account",
      reported_at: r.reported_at,
      status: r.status,
    }));
    await db.batchInsert("incoming_transfers", records, 50);
  });

  test.after.always(async () => {
    await running?.stop();
    await cleanup();
  });

  /** The expected listing: these statuses, oldest first by (reported_at, id). */
  function expected(statuses: readonly string[], reportedBefore = Number.POSITIVE_INFINITY): string[] {
    return rows
      .filter((r) => statuses.includes(r.status) && r.reported_at < reportedBefore)
      .sort((a, b) => a.reported_at - b.reported_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((r) => r.id);
  }

  /** Every page from the first, each at most `limit` long; the ids in the order listed. */
  async function walk(req: Request, limit: number, between?: (pageNumber: number) => Promise<void>): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const page = await deposits.listUnmatchedTransfers({ ...req, limit, cursor });
      pages++;
      if (page.transfers.length > limit) throw new Error(`a page of ${page.transfers.length} for limit ${limit}`);
      if (page.nextCursor !== "" && page.transfers.length < limit) throw new Error("a short page that is not the last");
      ids.push(...page.transfers.map((t) => t.id));
      cursor = page.nextCursor;
      if (between && cursor !== "") await between(pages);
    } while (cursor !== "" && pages < 1_000);
    return { ids, pages };
  }

  test.serial(`${storage}: the open queue walked page by page gives every open transfer once, oldest first by (reported_at, id), with each filter on every page`, async (t) => {
    const open = expected(["unmatched", "review"]);
    t.true(open.length > 100, "more open transfers than the default page");
    const both = await walk({ includeReview: true }, 7);
    t.deepEqual(both.ids, open);
    t.is(both.pages, Math.ceil(open.length / 7));

    t.deepEqual((await walk({ reviewOnly: true }, 5)).ids, expected(["review"]), "review_only: the review queue alone, on every page");
    t.deepEqual((await walk({ reviewOnly: true, includeReview: false }, 5)).ids, expected(["review"]), "review_only implies include_review");
    t.deepEqual((await walk({}, 11)).ids, expected(["unmatched"]), "without include_review: unmatched only");
    t.deepEqual((await walk({ includeReview: true, olderThanMs: BigInt(24 * HOUR) }, 9)).ids, expected(["unmatched", "review"], NOW - 24 * HOUR), "older_than_ms on every page");

    // One page of the default size, and the statuses as the listing reports them.
    const first = await deposits.listUnmatchedTransfers({ includeReview: true });
    t.is(first.transfers.length, 100);
    t.not(first.nextCursor, "");
    t.true(first.transfers.every((tr) => tr.status === TransferStatus.UNMATCHED || tr.status === TransferStatus.REVIEW));
    t.deepEqual(
      first.transfers.map((tr) => timestampMs(tr.reportedAt!)),
      first.transfers.map((tr) => rows.find((r) => r.id === tr.id)!.reported_at),
    );
  });

  test.serial(`${storage}: transfers settled between pages neither make the walk skip nor repeat the others`, async (t) => {
    const db = (running!.contexts.get("deposit") as DepositContext).db;
    const open = expected(["unmatched", "review"]);
    // After the first page: one already listed and two not yet listed are settled.
    const settled = [open[1]!, open[20]!, open[21]!];
    const { ids } = await walk({ includeReview: true }, 10, async (page) => {
      if (page === 1) await db("incoming_transfers").whereIn("id", settled).update({ status: "matched" });
    });
    t.deepEqual(
      ids,
      open.filter((id) => id !== open[20] && id !== open[21]),
    );
    await db("incoming_transfers").whereIn("id", settled).update({ status: "unmatched" });
    for (const id of settled) rows.find((r) => r.id === id)!.status = "unmatched";
  });

  test.serial(`${storage}: a cursor the listing did not issue is VALIDATION_ERROR on cursor`, async (t) => {
    const reason = async (cursor: string) => {
      try {
        await deposits.listUnmatchedTransfers({ includeReview: true, cursor });
      } catch (err) {
        const info = errorInfo(err);
        return `${info.reason} ${info.field}`;
      }
      return "ok";
    };
    const issued = (await deposits.listUnmatchedTransfers({ includeReview: true, limit: 3 })).nextCursor;
    t.is(await reason(issued), "ok");
    t.is(await reason("not a cursor"), "VALIDATION_ERROR cursor");
    t.is(await reason(Buffer.from("[1,2,3]").toString("base64url")), "VALIDATION_ERROR cursor");
    t.is(await reason(encodeCursor({ createdAt: NOW, id: "dep_1" })), "VALIDATION_ERROR cursor", "a deposit listing's cursor");
  });
}

storageSuite("SQLite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deposit-unmatched-"));
  return { env: { DATA_DIR: dir }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

storageSuite("MySQL", async () => {
  const database = await createTestDatabase();
  return { env: { DATABASE_URL: database.url }, cleanup: () => database.drop() };
});
