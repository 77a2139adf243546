import test from "ava";
import { auditRowHash, canonicalAuditRow, ChainWalk, GENESIS_HASH, type ChainedFields, type ChainedRow } from "../src/index.js";

// The chain's rule, pure: what a row's hash covers, and how a walk names the first row missing
// or altered, a cut tail against the head and against published heads, and rows outside it.

const base: Omit<ChainedFields, "seq" | "prev_hash" | "id"> = {
  created_at: 1_790_000_000_000,
  actor: "ayse@example.com",
  actor_kind: "human",
  role: "finance",
  service: "payout",
  rpc: "payments.payout.v1.PayoutService/AdjustBalance",
  targets: '["mer_1"]',
  reason: "bank fee",
  outcome: "ok",
  approval_id: null,
  maker: null,
  request_json: '{"merchantId":"mer_1"}',
  before_json: null,
  after_json: null,
  request_id: "req_1",
  trace_id: null,
  merchant_id: null,
  workload: "spiffe://payments.local/console",
  jti: "asr_1",
};

/** A valid chain of `n` rows. */
function chain(n: number): ChainedRow[] {
  const rows: ChainedRow[] = [];
  let prev = GENESIS_HASH;
  for (let i = 1; i <= n; i++) {
    const fields: ChainedFields = { ...base, seq: i, id: `aud_${i}`, jti: `asr_${i}`, prev_hash: prev };
    const row = { ...fields, row_hash: auditRowHash(fields) };
    rows.push(row);
    prev = row.row_hash;
  }
  return rows;
}

function walk(rows: readonly ChainedRow[], published: ConstructorParameters<typeof ChainWalk>[0] = []): ChainWalk {
  const w = new ChainWalk(published);
  for (const row of rows) if (!w.add(row)) break;
  return w;
}

const headOf = (rows: readonly ChainedRow[]) => ({ seq: BigInt(rows.length), hash: rows.at(-1)?.row_hash ?? GENESIS_HASH });

test("every field a row records, and the link to the row before, changes its hash", (t) => {
  const row: ChainedFields = { ...base, seq: 7, id: "aud_7", prev_hash: "a".repeat(64) };
  const hash = auditRowHash(row);
  t.regex(hash, /^[0-9a-f]{64}$/);
  const keys = [...Object.keys(base), "seq", "id", "prev_hash"] as Array<keyof ChainedFields>;
  t.is(keys.length, 22, "every field of ChainedFields");
  for (const key of keys) {
    const value = row[key];
    const changed = typeof value === "string" ? `${value}x` : value === null || value === undefined ? "" : typeof value === "bigint" ? value + 1n : Number(value) + 1;
    t.not(auditRowHash({ ...row, [key]: changed }), hash, `${key} is covered`);
  }
});

test("NULL and an empty text differ; a column the database lacks counts as NULL; integers hash alike as number, text or bigint", (t) => {
  const row: ChainedFields = { ...base, seq: 1, id: "aud_1", prev_hash: GENESIS_HASH };
  for (const key of ["approval_id", "maker", "request_json", "before_json", "after_json", "request_id", "trace_id", "merchant_id", "workload", "jti"] as const) {
    t.not(auditRowHash({ ...row, [key]: "" }), auditRowHash({ ...row, [key]: null }), key);
  }
  const lacking: ChainedFields = { ...row };
  delete lacking.workload;
  delete lacking.merchant_id;
  delete lacking.jti;
  t.is(auditRowHash(lacking), auditRowHash({ ...row, workload: null, merchant_id: null, jti: null }));
  t.is(auditRowHash({ ...row, seq: "1", created_at: String(base.created_at) }), auditRowHash(row));
  t.is(auditRowHash({ ...row, seq: 1n, created_at: BigInt(base.created_at) }), auditRowHash(row));
});

test("fields cannot slide into each other: the encoding keeps each field's bounds", (t) => {
  const row: ChainedFields = { ...base, seq: 1, id: "aud_1", prev_hash: GENESIS_HASH };
  t.not(auditRowHash({ ...row, actor: "ab", actor_kind: "c" }), auditRowHash({ ...row, actor: "a", actor_kind: "bc" }));
  t.not(auditRowHash({ ...row, reason: 'x","y' }), auditRowHash({ ...row, reason: "x", outcome: `y${row.outcome}` }));
  t.true(canonicalAuditRow(row).startsWith('["payments.audit.v1","1","aud_1",'));
});

test("a whole chain verifies, ending at its head; an empty one at genesis", (t) => {
  const rows = chain(5);
  const verdict = walk(rows).finish(headOf(rows));
  t.deepEqual(verdict, { rows: 5, head: headOf(rows) });
  t.deepEqual(new ChainWalk().finish({ seq: 0n, hash: GENESIS_HASH }), { rows: 0, head: { seq: 0n, hash: GENESIS_HASH } });
});

test("a row removed is named: the first of the gap", (t) => {
  const rows = chain(6);
  const verdict = walk([...rows.slice(0, 2), ...rows.slice(4)]).finish(headOf(rows));
  t.like(verdict.problem, { kind: "missing", seq: 3n });
  t.regex(verdict.problem!.message, /rows 3–4 are missing/);
  t.like(walk(rows.slice(1)).finish(headOf(rows)).problem, { kind: "missing", seq: 1n });
});

test("a row altered in place is named; one whose hash was recomputed too is named by the next row's link", (t) => {
  const rows = chain(5);
  const altered = rows.map((r) => (r.seq === 3 ? { ...r, reason: "nothing to see" } : r));
  t.like(walk(altered).finish(headOf(rows)).problem, { kind: "altered", seq: 3n, id: "aud_3" });
  const rehashed = rows.map((r) => {
    if (r.seq !== 3) return r;
    const fields = { ...r, outcome: "PERMISSION_DENIED" };
    return { ...fields, row_hash: auditRowHash(fields) };
  });
  const verdict = walk(rehashed).finish(headOf(rows));
  t.like(verdict.problem, { kind: "altered", seq: 3n, id: "aud_3" });
  t.regex(verdict.problem!.message, /row 4 \(aud_4\) links to a hash/);
  // The last row rewritten whole: only the head still holds its old hash.
  const lastRewritten = rows.map((r) => {
    if (r.seq !== 5) return r;
    const fields = { ...r, actor: "mallory@example.com" };
    return { ...fields, row_hash: auditRowHash(fields) };
  });
  t.like(walk(lastRewritten).finish(headOf(rows)).problem, { kind: "altered", seq: 5n });
});

test("a cut tail: the head row says more rows than there are, or (the head set back) a published head does", (t) => {
  const rows = chain(6);
  t.like(walk(rows.slice(0, 4)).finish(headOf(rows)).problem, { kind: "cut", seq: 5n });
  const cut = rows.slice(0, 4);
  const published = [{ seq: 6n, hash: rows[5]!.row_hash, source: "published 2026-12-01T10:00:00Z" }];
  const verdict = walk(cut, published).finish(headOf(cut));
  t.like(verdict.problem, { kind: "cut", seq: 5n });
  t.regex(verdict.problem!.message, /rows 5–6 are missing.*published 2026-12-01T10:00:00Z/);
  // The highest head published counts, whichever order they come in (a lower one was published since the cut).
  const since = [{ seq: 4n, hash: rows[3]!.row_hash, source: "published later" }, ...published];
  t.regex(walk(cut, since).finish(headOf(cut)).problem!.message, /rows 5–6 are missing/);
  // A published head the chain still reaches, with that very hash, is good; another hash is an altered row.
  t.is(walk(rows, published).finish(headOf(rows)).problem, undefined);
  t.is(walk(rows, [{ seq: 3n, hash: rows[2]!.row_hash, source: "--head" }]).finish(headOf(rows)).problem, undefined);
  t.like(walk(rows, [{ seq: 3n, hash: "f".repeat(64), source: "--head" }]).finish(headOf(rows)).problem, { kind: "altered", seq: 3n });
  t.is(walk(rows, [{ seq: 0n, hash: GENESIS_HASH, source: "--head" }]).finish(headOf(rows)).problem, undefined);
});

test("rows past the head or without a seq are outside the chain; a row out of order is named", (t) => {
  const rows = chain(4);
  t.like(walk(rows).finish({ seq: 3n, hash: rows[2]!.row_hash }).problem, { kind: "unchained", seq: 4n });
  t.like(walk(rows).finish(headOf(rows), 2n).problem, { kind: "unchained" });
  t.regex(walk(rows).finish(headOf(rows), 2n).problem!.message, /2 rows of the audit carry no seq/);
  t.like(walk([rows[0]!, rows[1]!, rows[1]!]).finish(headOf(rows)).problem, { kind: "altered", seq: 2n });
});

test("the walk stops at the first problem and reads no further", (t) => {
  const rows = chain(5);
  const w = new ChainWalk();
  t.true(w.add(rows[0]!));
  t.false(w.add(rows[2]!));
  t.false(w.add(rows[3]!));
  t.like(w.finish(headOf(rows)), { rows: 1, problem: { kind: "missing", seq: 2n } });
});
