import test from "ava";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import type { Knex } from "knex";
import {
  applyStateMove,
  heldUnderLock,
  ensureDatabase,
  errorInfo,
  forUpdate,
  migrate,
  newId,
  openDatabase,
  outboxMigrations,
  transactionWithRetry,
  type StateTable,
} from "../src/index.js";
import { createTestDatabase, manualClock } from "@payments/testing";

// applyStateMove on a toy state machine (a ticket: open → done, open → dropped), on SQLite and on
// a real MariaDB: the status, the patch, the sequence and the outbox row land together or not at all.

type TicketStatus = "open" | "done" | "dropped";
type TicketMove = "finish" | "drop";

interface TicketRow {
  id: string;
  status: string;
  note: string | null;
  sequence: number;
  updated_at: number | null;
}

const STATUSES: readonly string[] = ["open", "done", "dropped"];
const MOVES: Record<TicketMove, { from: TicketStatus; to: TicketStatus }> = { finish: { from: "open", to: "done" }, drop: { from: "open", to: "dropped" } };

/** The toy machine's pure rule: a drop repeated on a dropped ticket is unchanged, anything else off its start is refused. */
function decideTicket(status: TicketStatus, move: TicketMove) {
  const { from, to } = MOVES[move];
  if (status === from) return { kind: "moved" as const, from, to };
  if (move === "drop" && status === to) return { kind: "unchanged" as const };
  return { kind: "refused" as const, status, message: `the ticket is ${status}; only an ${from} ticket can move to ${to}` };
}

const TICKETS: StateTable<TicketRow, TicketStatus> = {
  name: "tickets",
  id: "id",
  status: "status",
  sequence: "sequence",
  statusOf: (row) => {
    if (!STATUSES.includes(row.status)) throw new Error(`ticket ${row.id} has an unknown status ${row.status}`);
    return row.status as TicketStatus;
  },
};

const clock = manualClock();

function topicOf(ticketId: string): string {
  return `test.v1.ticket.${ticketId}`;
}

/** One move of the ticket, with its note and its event; `refuse` replaces the default refusal. */
function moveTicket(trx: Knex.Transaction, row: TicketRow, move: TicketMove, options: { note?: string; refuse?: (refusal: { message: string }) => Error } = {}) {
  return applyStateMove(trx, clock, {
    table: TICKETS,
    row,
    move,
    decide: decideTicket,
    ...(options.refuse ? { refuse: options.refuse } : {}),
    patch: (_moved, now) => ({ note: options.note ?? null, updated_at: now }),
    event: (moved, { from, to }) => ({ topic: topicOf(moved.id), schema: MerchantChangedSchema, init: { merchantId: moved.id, change: `${from}→${to} #${moved.sequence}` } }),
  });
}

async function insertTicket(db: Knex, status: TicketStatus): Promise<TicketRow> {
  const row: TicketRow = { id: newId("tkt"), status, note: null, sequence: 0, updated_at: null };
  await db("tickets").insert(row);
  return row;
}

async function readTicket(db: Knex, id: string): Promise<TicketRow> {
  const row = (await db("tickets").where({ id }).first()) as TicketRow | undefined;
  if (!row) throw new Error(`no ticket ${id}`);
  return { ...row, sequence: Number(row.sequence), updated_at: row.updated_at === null ? null : Number(row.updated_at) };
}

async function outboxRows(db: Knex, ticketId: string): Promise<Array<{ event_id: string; payload: Buffer }>> {
  return (await db("outbox").where({ topic: topicOf(ticketId) })) as Array<{ event_id: string; payload: Buffer }>;
}

async function prepare(db: Knex): Promise<void> {
  await migrate(db, outboxMigrations);
  await db.schema.createTable("tickets", (t) => {
    t.string("id", 40).primary();
    t.string("status", 20).notNullable();
    t.string("note", 100).nullable();
    t.integer("sequence").notNullable().defaultTo(0);
    t.bigInteger("updated_at").nullable();
  });
}

const backends: Array<{ name: string; open(): Promise<{ db: Knex; close(): Promise<void> }> }> = [
  {
    name: "sqlite",
    async open() {
      const db = openDatabase({ sqliteFile: join(mkdtempSync(join(tmpdir(), "state-move-")), "kit.sqlite") });
      await prepare(db);
      return { db, close: () => db.destroy() };
    },
  },
  {
    name: "mysql",
    async open() {
      const database = await createTestDatabase();
      await ensureDatabase(database.url);
      const db = openDatabase({ url: database.url, poolMax: 4 });
      await prepare(db);
      return {
        db,
        async close() {
          await db.destroy();
          await database.drop();
        },
      };
    },
  },
];

test("heldUnderLock passes a result through and throws on \"stale\", naming the table and the row", (t) => {
  const table = { name: "tickets", id: "id" };
  const result = { moved: false as const, row: { id: "tkt_1" } };
  t.is(heldUnderLock(result, table, result.row), result);
  t.throws(() => heldUnderLock("stale", table, { id: "tkt_1" }), { message: "tickets row tkt_1 changed under its lock" });
});

for (const backend of backends) {
  let db: Knex;
  let close: (() => Promise<void>) | undefined;
  test.before(async () => {
    ({ db, close } = await backend.open());
  });
  test.after.always(async () => {
    await close?.();
  });

  test(`${backend.name}: a move writes its status, patch, sequence and outbox event in one transaction and returns the new row and event id`, async (t) => {
    const ticket = await insertTicket(db, "open");
    const result = await transactionWithRetry(db, async (trx) => {
      const locked = (await forUpdate(trx, trx("tickets").where({ id: ticket.id }).first())) as TicketRow;
      return moveTicket(trx, locked, "finish", { note: "fixed" });
    });
    if (result === "stale" || !result.moved) return t.fail(`expected a move, got ${JSON.stringify(result)}`);
    const now = clock.now().getTime();
    t.like(result.row, { id: ticket.id, status: "done", note: "fixed", sequence: 1, updated_at: now });
    t.like(result.decision, { from: "open", to: "done" });
    t.deepEqual(await readTicket(db, ticket.id), { id: ticket.id, status: "done", note: "fixed", sequence: 1, updated_at: now });
    const events = await outboxRows(db, ticket.id);
    t.deepEqual(
      events.map((e) => e.event_id),
      [result.eventId],
    );
    const event = fromBinary(MerchantChangedSchema, events[0]!.payload);
    t.is(event.change, "open→done #1", "the event is built from the row as the move left it");
    t.is(event.eventId, events[0]!.event_id);
  });

  test(`${backend.name}: a refused move throws the error it is given and changes nothing`, async (t) => {
    const ticket = await insertTicket(db, "done");
    const given = new Error("not this one");
    const thrown = await t.throwsAsync(
      transactionWithRetry(db, (trx) => moveTicket(trx, ticket, "finish", { note: "again", refuse: (refusal) => Object.assign(given, { refusal: refusal.message }) })),
    );
    t.is(thrown, given);
    t.is((thrown as Error & { refusal?: string }).refusal, "the ticket is done; only an open ticket can move to done");
    t.deepEqual(await readTicket(db, ticket.id), ticket);
    t.deepEqual(await outboxRows(db, ticket.id), []);
  });

  test(`${backend.name}: without its own error, a refused move is FAILED_PRECONDITION INVALID_TRANSACTION_STATE with the decision's message and status`, async (t) => {
    const ticket = await insertTicket(db, "dropped");
    const thrown = await t.throwsAsync(transactionWithRetry(db, (trx) => moveTicket(trx, ticket, "finish")));
    t.like(errorInfo(thrown), {
      code: Code.FailedPrecondition,
      reason: "INVALID_TRANSACTION_STATE",
      message: "the ticket is dropped; only an open ticket can move to done",
      details: { status: "dropped" },
    });
    t.deepEqual(await readTicket(db, ticket.id), ticket);
    t.deepEqual(await outboxRows(db, ticket.id), []);
  });

  test(`${backend.name}: a move already made (unchanged) returns the row as it is and writes nothing`, async (t) => {
    const ticket = await insertTicket(db, "dropped");
    const result = await transactionWithRetry(db, (trx) => moveTicket(trx, ticket, "drop", { note: "twice" }));
    t.deepEqual(result, { moved: false, row: ticket });
    t.deepEqual(await readTicket(db, ticket.id), ticket);
    t.deepEqual(await outboxRows(db, ticket.id), []);
  });

  test(`${backend.name}: a row whose status changed since it was read is "stale": no update, no effects, no event`, async (t) => {
    const seen = await insertTicket(db, "open");
    // Someone else moves it between our read and our move.
    await db("tickets").where({ id: seen.id }).update({ status: "dropped", sequence: 1 });
    let effects = 0;
    const result = await transactionWithRetry(db, (trx) =>
      applyStateMove(trx, clock, {
        table: TICKETS,
        row: seen,
        move: "finish",
        decide: decideTicket,
        patch: () => ({ note: "late" }),
        effects: async () => {
          effects++;
        },
        event: (row) => ({ topic: topicOf(row.id), schema: MerchantChangedSchema, init: { merchantId: row.id } }),
      }),
    );
    t.is(result, "stale");
    t.is(effects, 0);
    t.deepEqual(await readTicket(db, seen.id), { ...seen, status: "dropped", sequence: 1 });
    t.deepEqual(await outboxRows(db, seen.id), []);
  });

  test(`${backend.name}: when the surrounding transaction rolls back, neither the row change nor the outbox row remains`, async (t) => {
    const ticket = await insertTicket(db, "open");
    let moved: unknown;
    await t.throwsAsync(
      db.transaction(async (trx) => {
        moved = await moveTicket(trx, ticket, "finish", { note: "undone" });
        throw new Error("something later in the transaction fails");
      }),
      { message: "something later in the transaction fails" },
    );
    t.like(moved, { moved: true, row: { status: "done" } }, "the move itself had succeeded");
    t.deepEqual(await readTicket(db, ticket.id), ticket);
    t.deepEqual(await outboxRows(db, ticket.id), []);
  });
}
