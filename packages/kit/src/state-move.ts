import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import type { Clock } from "./clock.js";
import { hotQuery, sqlName } from "./db.js";
import { serviceError } from "./errors.js";
import { recordEvent } from "./outbox.js";

/**
 * The one way a state machine's row changes status: decide with the machine's pure function on
 * the status the row was read in, write the move as a conditional UPDATE (`… WHERE id = ? AND
 * status = <as read>`), then the move's other writes and its event in the outbox, all in the
 * caller's transaction. The caller either locked the row (FOR UPDATE) or merely saw it: then
 * the conditional UPDATE is the guard, and a row that moved since it was read is "stale" with
 * nothing written.
 */

/** Where a state machine keeps its rows. */
export interface StateTable<Row, Status extends string> {
  name: string;
  id: keyof Row & string;
  status: keyof Row & string;
  /** The row's status as the state machine names it (a stored value it does not know throws). */
  statusOf: (row: Row) => Status;
  /** A column every move counts up by one (the row's version), if the table keeps one. */
  sequence?: keyof Row & string;
}

/** What a pure state machine answers for a move from a status; outcomes may carry more (the effect, the spec). */
export type StateDecision<Status extends string> =
  | { kind: "moved"; to: Status }
  /** Already where the move leads (a repeated idempotent move): nothing to write, not an error. */
  | { kind: "unchanged" }
  /** The move does not start from this status; `message` says why, for the caller. */
  | { kind: "refused"; status: Status | null; message: string };

export interface StateEvent<Desc extends DescMessage> {
  topic: string;
  schema: Desc;
  init: MessageInitShape<Desc>;
}

export interface StateMove<Row, Status extends string, Move, Decision extends StateDecision<Status>, Desc extends DescMessage> {
  table: StateTable<Row, Status>;
  /** The row as read, locked or not: the UPDATE applies only while its status is still this one. */
  row: Row;
  move: Move;
  /** The state machine's pure rule. */
  decide: (from: Status, move: Move) => Decision;
  /** The error a refusal throws; by default FAILED_PRECONDITION INVALID_TRANSACTION_STATE with the message and details.status. */
  refuse?: (refusal: Extract<Decision, { kind: "refused" }>) => Error;
  /** The columns the move sets besides the status (and the sequence). */
  patch: (moved: Extract<Decision, { kind: "moved" }>, now: number) => Partial<Row>;
  /** The move's other writes in the transaction (ledger, side records); may return the row as now stored. */
  effects?: (row: Row, moved: Extract<Decision, { kind: "moved" }>, now: number) => Promise<Row | void>;
  /** The event the move publishes through the outbox, if any. */
  event?: (row: Row, moved: Extract<Decision, { kind: "moved" }>, now: number) => StateEvent<Desc> | undefined;
}

export type StateMoveResult<Row, Moved> =
  | { moved: false; row: Row }
  /** `row`: the row as the move left it; `eventId`: the outbox event, when the move has one. */
  | { moved: true; row: Row; decision: Moved; eventId?: string };

/**
 * Applies one move to `row` inside `trx`. Refused moves throw and write nothing; "stale" when
 * the row's status is no longer the one it was read in (nothing written: decide again on what
 * is there now). A caller holding the row's lock cannot meet "stale".
 */
export async function applyStateMove<Row extends object, Status extends string, Move, Decision extends StateDecision<Status>, Desc extends DescMessage>(
  trx: Knex.Transaction,
  clock: Clock,
  spec: StateMove<Row, Status, Move, Decision, Desc>,
): Promise<StateMoveResult<Row, Extract<Decision, { kind: "moved" }>> | "stale"> {
  const { table, row: current } = spec;
  const decision = spec.decide(table.statusOf(current), spec.move);
  if (decision.kind === "unchanged") return { moved: false, row: current };
  if (decision.kind === "refused") {
    const refusal = decision as Extract<Decision, { kind: "refused" }>;
    throw spec.refuse ? spec.refuse(refusal) : refusedMove(refusal);
  }
  const moved = decision as Extract<Decision, { kind: "moved" }>;

  const now = clock.now().getTime();
  const patch: Record<string, unknown> = { ...spec.patch(moved, now), [table.status]: moved.to };
  const updated = await conditionalUpdate(trx, table, current, patch);
  if (updated !== 1) return "stale";
  if (table.sequence) patch[table.sequence] = Number(current[table.sequence]) + 1;

  let row = { ...current, ...patch } as Row;
  if (spec.effects) row = (await spec.effects(row, moved, now)) ?? row;
  const event = spec.event?.(row, moved, now);
  if (!event) return { moved: true, row, decision: moved };
  const eventId = await recordEvent(trx, clock, event.topic, event.schema, event.init);
  return { moved: true, row, decision: moved, eventId };
}

/**
 * The move's `UPDATE … WHERE id = ? AND status = <as read>`, the sequence counted up by one:
 * written out as SQL (hotQuery: on MySQL straight to the transaction's connection) when every
 * value is a plain one, as a knex builder when the patch holds an expression of its own.
 */
async function conditionalUpdate<Row extends object>(trx: Knex.Transaction, table: StateTable<Row, string>, current: Row, patch: Record<string, unknown>): Promise<number> {
  const plain = (value: unknown) => value === null || Buffer.isBuffer(value) || ["string", "number", "boolean"].includes(typeof value);
  const columns = Object.entries(patch).filter(([column, value]) => value !== undefined && column !== table.sequence);
  if (!columns.every(([, value]) => plain(value))) {
    return trx(table.name)
      .where({ [table.id]: current[table.id as keyof Row], [table.status]: current[table.status as keyof Row] })
      .update({ ...patch, ...(table.sequence ? { [table.sequence]: trx.raw("?? + 1", [table.sequence]) } : {}) });
  }
  const sets = columns.map(([column]) => `${sqlName(column)} = ?`);
  if (table.sequence) sets.push(`${sqlName(table.sequence)} = ${sqlName(table.sequence)} + 1`);
  const sql = `UPDATE ${sqlName(table.name)} SET ${sets.join(", ")} WHERE ${sqlName(table.id)} = ? AND ${sqlName(table.status)} = ?`;
  const { changed } = await hotQuery(trx, sql, [...columns.map(([, value]) => value), current[table.id as keyof Row], current[table.status as keyof Row]]);
  return changed;
}

/**
 * The result of a move whose caller holds the row's lock (FOR UPDATE on MySQL, the one writer on
 * SQLite): nobody else can have moved the row, so "stale" here is a bug, thrown as one.
 */
export function heldUnderLock<R>(result: R | "stale", table: { name: string; id: string }, row: object): R {
  if (result === "stale") throw new Error(`${table.name} row ${String((row as Record<string, unknown>)[table.id])} changed under its lock`);
  return result;
}

function refusedMove(refusal: { status: string | null; message: string }): Error {
  return serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", refusal.message, { details: { status: refusal.status ?? "" } });
}
