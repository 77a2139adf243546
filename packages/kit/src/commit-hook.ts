import { AsyncLocalStorage } from "node:async_hooks";
import type { Knex } from "knex";

/**
 * Something a call must commit together with the change it makes, or not at all: the access
 * layer's audit row. While one is set (`withCommitParticipant`, around a handler), the first
 * transaction of its database that changed a row offers it the open transaction just before
 * COMMIT: what it writes there commits with the change or rolls back with it, so a crash
 * between the two cannot keep one without the other. A transaction that changed nothing (a
 * read, a conditional UPDATE that matched no row) offers nothing.
 *
 * Every path of a database opened by `openDatabase` offers it: `runTransaction` (and so
 * `transactionWithRetry` and `claimTransaction`), and knex's own `db.transaction(fn)` (not a
 * nested `trx.transaction`, whose COMMIT is the outer one's, nor a transaction begun without a
 * function, which commits when its owner says). A write outside any transaction offers nothing:
 * the participant then writes on its own after the call (the access layer's fallback).
 */
export interface CommitParticipant {
  /**
   * Offered the open transaction of `db`, which changed something, before its COMMIT: true when
   * it wrote there (it is then told how the COMMIT ended), false when it declined (another
   * database, or it rides in another transaction already). A throw rolls the transaction back.
   * A retried attempt offers it again.
   */
  beforeCommit(trx: Knex.Transaction, db: Knex): Promise<boolean>;
  /** The transaction it wrote in committed. */
  committed(): void;
  /** The transaction it wrote in rolled back (or its COMMIT failed): what it wrote is gone. */
  rolledBack(): void;
}

const participants = new AsyncLocalStorage<CommitParticipant | undefined>();

/** Runs `fn` with `participant` offered the first transaction that changes something (see CommitParticipant). */
export function withCommitParticipant<T>(participant: CommitParticipant, fn: () => Promise<T>): Promise<T> {
  return participants.run(participant, fn);
}

/**
 * Runs `fn` with no participant: a call made inside an audited one (the all-in-one's in-process
 * calls to another module) commits its own changes, never the outer call's audit row.
 */
export function withoutCommitParticipant<T>(fn: () => Promise<T>): Promise<T> {
  return participants.getStore() === undefined ? fn() : participants.run(undefined, fn);
}

/** The participant of the current call, if any. */
export function currentCommitParticipant(): CommitParticipant | undefined {
  return participants.getStore();
}

/** Statements that may change rows; anything else (SELECT, SET, BEGIN) changes none. */
const WRITE = /^\s*(insert|update|delete|replace)\b/i;

/**
 * Whether a statement changed a row, from its text and what the driver answered: the count of an
 * UPDATE or DELETE (knex's number, mysql2's `affectedRows`, better-sqlite3's `changes`); an
 * INSERT's answer (ids) counts as a change unless a count says 0 (INSERT IGNORE of a duplicate).
 */
export function statementChanged(sql: string, response: unknown): boolean {
  if (!WRITE.test(sql)) return false;
  if (typeof response === "number") return response > 0;
  const header: unknown = Array.isArray(response) ? response[0] : response;
  if (header && typeof header === "object" && !Array.isArray(header)) {
    const { affectedRows, changes } = header as { affectedRows?: unknown; changes?: unknown };
    const count = typeof affectedRows === "number" ? affectedRows : changes;
    if (typeof count === "number") return count > 0;
  }
  return true;
}

/** One transaction's watch for its first change, kept while a participant is set. */
export interface ChangeWatch {
  readonly participant: CommitParticipant;
  changed: boolean;
  /** Listens on a knex builder, raw or transaction for the answers of its statements. */
  follow(emitter: { on(event: "query-response", listener: (response: unknown, query: { sql?: string } | undefined) => void): unknown }): void;
}

/** A watch for the transaction about to begin, when the current call has a participant; undefined otherwise (nothing is watched). */
export function watchForChange(): ChangeWatch | undefined {
  const participant = participants.getStore();
  if (!participant) return undefined;
  const watch: ChangeWatch = {
    participant,
    changed: false,
    follow(emitter) {
      emitter.on("query-response", (response, query) => {
        if (!watch.changed && typeof query?.sql === "string" && statementChanged(query.sql, response)) watch.changed = true;
      });
    },
  };
  return watch;
}

/**
 * Offers the participant the transaction `watch` followed, if it changed something: true when
 * the participant wrote in it, and must then be told how the COMMIT ended (`settle`).
 */
export async function offerBeforeCommit(watch: ChangeWatch | undefined, trx: Knex.Transaction, db: Knex): Promise<boolean> {
  if (!watch?.changed) return false;
  return watch.participant.beforeCommit(trx, db);
}

/** Tells the participant that wrote in a transaction whether its COMMIT went through. */
export function settle(watch: ChangeWatch | undefined, took: boolean, committed: boolean): void {
  if (!watch || !took) return;
  if (committed) watch.participant.committed();
  else watch.participant.rolledBack();
}
