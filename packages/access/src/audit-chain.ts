import { createHash } from "node:crypto";

/**
 * The audit as a hash chain: each row carries `prev_hash` (the row_hash of the row before it,
 * by `seq`) and `row_hash`, the SHA-256 of a canonical encoding of every field it records and
 * prev_hash. Changing a row's content changes its hash; recomputing that hash breaks the next
 * row's link; deleting a row leaves a gap in `seq`; cutting the tail is caught against a head
 * published before (audit-head.ts). Pure: the service computes it when appending, and the
 * verifier (`pnpm cli audit verify`) recomputes it from what the service reads back.
 */

/** The prev_hash of the first row, and the head of an empty chain. */
export const GENESIS_HASH = "0".repeat(64);

/** Names the encoding, so a later one can never collide with this one. */
const ENCODING = "payments.audit.v1";

/** Every field a row's hash covers, as stored: a column the database lacks (the console has no `workload`) counts as NULL. */
export interface ChainedFields {
  seq: number | string | bigint;
  id: string;
  created_at: number | string | bigint;
  actor: string;
  actor_kind: string;
  role: string;
  service: string;
  rpc: string;
  targets: string;
  reason: string;
  outcome: string;
  approval_id: string | null;
  maker: string | null;
  request_json: string | null;
  before_json: string | null;
  after_json: string | null;
  request_id: string | null;
  trace_id: string | null;
  merchant_id?: string | null;
  workload?: string | null;
  jti?: string | null;
  prev_hash: string;
}

export interface ChainedRow extends ChainedFields {
  row_hash: string;
}

/** An integer as its decimal digits: the same text whether the driver gave a number, a string or a bigint. */
function integer(value: number | string | bigint): string {
  return BigInt(value).toString();
}

/**
 * The bytes a row's hash covers: a JSON array, in a fixed order, of the encoding's name, every
 * field (integers as decimal text, NULL as null, so NULL and "" differ) and prev_hash.
 */
export function canonicalAuditRow(row: ChainedFields): string {
  return JSON.stringify([
    ENCODING,
    integer(row.seq),
    row.id,
    integer(row.created_at),
    row.actor,
    row.actor_kind,
    row.role,
    row.service,
    row.rpc,
    row.targets,
    row.reason,
    row.outcome,
    row.approval_id,
    row.maker,
    row.request_json,
    row.before_json,
    row.after_json,
    row.request_id,
    row.trace_id,
    row.merchant_id ?? null,
    row.workload ?? null,
    row.jti ?? null,
    row.prev_hash,
  ]);
}

/** The row_hash of a row: SHA-256 of its canonical encoding (UTF-8), lower-case hex. */
export function auditRowHash(row: ChainedFields): string {
  return createHash("sha256").update(canonicalAuditRow(row), "utf8").digest("hex");
}

/** A head: the seq and row_hash of the chain's last row. */
export interface ChainHead {
  seq: bigint;
  hash: string;
}

/** A head published earlier (on the bus, in a log line, or given by hand), to hold the chain to. */
export interface PublishedHead extends ChainHead {
  /** Where it came from, for the message (`published 2026-12-01T10:00:00Z`, `--head`). */
  source: string;
}

export type ChainProblemKind = "missing" | "altered" | "cut" | "unchained";

/** The first thing wrong with a chain, naming the row. */
export interface ChainProblem {
  kind: ChainProblemKind;
  /** The seq of the row missing or altered (the first of a missing run). */
  seq: bigint;
  /** The altered row's id, when it is there to name. */
  id?: string;
  message: string;
}

export interface ChainVerdict {
  rows: number;
  /** The head the walk ended at (the last row that verified). */
  head: ChainHead;
  problem?: ChainProblem;
}

/**
 * Walks a chain row by row, in seq order (pages of the service's ListAuditChain), and stops at
 * the first problem: a gap in seq (rows missing), a row whose content no longer hashes to its
 * row_hash, or a link that breaks (the row before was altered and its hash recomputed). Then
 * `finish` holds the end to the database's own head and to heads published earlier (a cut tail).
 */
export class ChainWalk {
  private expected = 1n;
  private previous = GENESIS_HASH;
  private previousId: string | undefined;
  private count = 0;
  private found: ChainProblem | undefined;
  /** The hashes of the rows published heads name, to compare at the end. */
  private readonly watched = new Map<bigint, string>();

  constructor(private readonly published: readonly PublishedHead[] = []) {
    for (const head of published) this.watched.set(head.seq, "");
  }

  get problem(): ChainProblem | undefined {
    return this.found;
  }

  /** Takes the next row; false once a problem was found (the rest is not read). */
  add(row: ChainedRow): boolean {
    if (this.found) return false;
    const seq = BigInt(row.seq);
    if (seq !== this.expected) {
      this.found =
        seq > this.expected
          ? { kind: "missing", seq: this.expected, message: `${missingRun(this.expected, seq - 1n)} missing: the row after the chain's row ${this.expected - 1n} is ${seq} (${row.id})` }
          : { kind: "altered", seq, id: row.id, message: `row ${seq} (${row.id}) is out of order: row ${this.expected - 1n} came before it` };
      return false;
    }
    if (auditRowHash(row) !== row.row_hash) {
      this.found = { kind: "altered", seq, id: row.id, message: `row ${seq} (${row.id}) was altered: its content no longer hashes to its row_hash` };
      return false;
    }
    if (row.prev_hash !== this.previous) {
      this.found = {
        kind: "altered",
        seq: seq - 1n,
        ...(this.previousId ? { id: this.previousId } : {}),
        message: `row ${seq - 1n}${this.previousId ? ` (${this.previousId})` : ""} was altered: row ${seq} (${row.id}) links to a hash it no longer has (its own hash was recomputed)`,
      };
      return false;
    }
    if (this.watched.has(seq)) this.watched.set(seq, row.row_hash);
    this.expected = seq + 1n;
    this.previous = row.row_hash;
    this.previousId = row.id;
    this.count++;
    return true;
  }

  /**
   * The verdict, once every row was added: the database's head (read with the last page) must be
   * where the walk ended, each published head must be a row the walk passed with that very hash,
   * and no row may sit outside the chain (`unchained`: rows without a seq).
   */
  finish(head: ChainHead | undefined, unchained = 0n): ChainVerdict {
    const end: ChainHead = { seq: this.expected - 1n, hash: this.previous };
    const verdict = (problem?: ChainProblem): ChainVerdict => ({ rows: this.count, head: end, ...(problem ? { problem } : {}) });
    if (this.found) return verdict(this.found);
    if (head && head.seq > end.seq) {
      return verdict({ kind: "cut", seq: end.seq + 1n, message: `${missingRun(end.seq + 1n, head.seq)} missing: the chain ends at row ${end.seq}, its head row says ${head.seq} (a cut tail)` });
    }
    if (head && head.seq === end.seq && head.hash !== end.hash) {
      return verdict({ kind: "altered", seq: end.seq, message: `row ${end.seq} was altered: the chain's head holds another hash for it` });
    }
    if (head && head.seq < end.seq) {
      return verdict({ kind: "unchained", seq: head.seq + 1n, message: `${missingRun(head.seq + 1n, end.seq)} appended past the chain's head (${head.seq}): written outside the audit's lock` });
    }
    // Measured against the highest head ever published: a lower one published since the cut hides nothing.
    const top = this.published.reduce<PublishedHead | undefined>((high, head) => (!high || head.seq > high.seq ? head : high), undefined);
    if (top && top.seq > end.seq) {
      return verdict({
        kind: "cut",
        seq: end.seq + 1n,
        message: `${missingRun(end.seq + 1n, top.seq)} missing: the chain ends at row ${end.seq}, but its head was at ${top.seq} (${top.source}): a cut tail`,
      });
    }
    for (const published of this.published) {
      const hash = published.seq === 0n ? GENESIS_HASH : this.watched.get(published.seq);
      if (hash !== published.hash) {
        return verdict({ kind: "altered", seq: published.seq, message: `row ${published.seq} was altered: its hash is not the one published (${published.source})` });
      }
    }
    if (unchained > 0n) {
      return verdict({ kind: "unchained", seq: 0n, message: `${unchained} row${unchained === 1n ? "" : "s"} of the audit carr${unchained === 1n ? "ies" : "y"} no seq: appended outside the chain` });
    }
    return verdict();
  }
}

function missingRun(from: bigint, to: bigint): string {
  return from === to ? `row ${from} is` : `rows ${from}–${to} are`;
}
