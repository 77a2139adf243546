import test from "ava";
import {
  APPROVAL_EXPIRED,
  APPROVAL_REJECTED,
  APPROVAL_STATES,
  approvalAfterCancel,
  approvalAtCreation,
  decideApproval,
  isApprovalState,
  isSendable,
  type ApprovalColumn,
  type ApprovalDecision,
} from "../src/withdrawal-approval.js";
import { WITHDRAWAL_STATUSES } from "../src/withdrawal-state.js";

// The merchant's four-eyes on its API keys' withdrawals, pure (src/withdrawal-approval.ts): every
// combination of who asks, threshold and amount at creation; every decision on every withdrawal
// status × approval state × before, at and after the expiry.

const COLUMNS: ApprovalColumn[] = [null, ...APPROVAL_STATES];
const DECISIONS: ApprovalDecision[] = ["approve", "reject", "expire"];
const EXPIRES = 1_000_000;

test("at creation: only an API key's withdrawal strictly above a threshold waits; a trusted key's is marked and goes", (t) => {
  const keys = [undefined, { trusted: false }, { trusted: true }] as const;
  const thresholds = [undefined, 0n, 5_000n, 5_000] as const;
  const amounts = [1, 4_999, 5_000, 5_001, Number.MAX_SAFE_INTEGER];
  for (const key of keys) {
    for (const threshold of thresholds) {
      for (const amount of amounts) {
        const got = approvalAtCreation({ key, threshold, amount });
        const above = threshold !== undefined && BigInt(amount) > BigInt(threshold);
        const want: ApprovalColumn = !key || !above ? null : key.trusted ? "trusted_key" : "awaiting";
        t.is(got, want, `key ${JSON.stringify(key)}, threshold ${threshold}, amount ${amount}`);
      }
    }
  }
});

test("the worker sends every approval state but one that waits", (t) => {
  for (const column of COLUMNS) t.is(isSendable(column), column !== "awaiting", String(column));
});

test("every decision × withdrawal status × approval state × time: only an awaiting approval of a pending withdrawal is decided, a person before the expiry and the job at or after it", (t) => {
  const times = [0, EXPIRES - 1, EXPIRES, EXPIRES + 1];
  for (const status of WITHDRAWAL_STATUSES) {
    for (const approval of COLUMNS) {
      for (const decision of DECISIONS) {
        for (const now of times) {
          const name = `${decision} of a ${status} withdrawal with approval ${String(approval)} at ${now}`;
          const outcome = decideApproval({ status, approval, expiresAt: EXPIRES }, decision, now);
          const lapsed = now >= EXPIRES;
          if (approval !== "awaiting") {
            t.like(outcome, { kind: "refused", reason: "APPROVAL_NOT_PENDING" }, name);
          } else if (status !== "pending") {
            t.like(outcome, { kind: "refused", reason: "INVALID_TRANSACTION_STATE" }, name);
          } else if (decision === "expire") {
            t.deepEqual(outcome, lapsed ? { kind: "cancel", to: "expired", failureReason: APPROVAL_EXPIRED } : { kind: "refused", reason: "APPROVAL_NOT_DUE", message: "the approval has not lapsed yet" }, name);
          } else if (lapsed) {
            t.like(outcome, { kind: "refused", reason: "APPROVAL_EXPIRED" }, name);
          } else if (decision === "approve") {
            t.deepEqual(outcome, { kind: "approve", to: "approved" }, name);
          } else {
            t.deepEqual(outcome, { kind: "cancel", to: "rejected", failureReason: APPROVAL_REJECTED }, name);
          }
        }
      }
    }
  }
});

test("a person and the expiry can never both win: at any one moment at most one of approve and expire applies", (t) => {
  for (let now = EXPIRES - 3; now <= EXPIRES + 3; now++) {
    const facts = { status: "pending" as const, approval: "awaiting" as const, expiresAt: EXPIRES };
    const applies = (["approve", "expire"] as const).filter((d) => decideApproval(facts, d, now).kind !== "refused");
    t.is(applies.length, 1, `at ${now}: ${applies.join(", ")}`);
  }
});

test("an awaiting approval without an expiry is treated as lapsed, never kept waiting forever", (t) => {
  const facts = { status: "pending" as const, approval: "awaiting" as const, expiresAt: null };
  t.like(decideApproval(facts, "approve", 0), { kind: "refused", reason: "APPROVAL_EXPIRED" });
  t.like(decideApproval(facts, "expire", 0), { kind: "cancel", to: "expired" });
});

test("a decision once made is final: after approve, reject or expire every further decision is refused", (t) => {
  for (const first of DECISIONS) {
    const now = first === "expire" ? EXPIRES : EXPIRES - 1;
    const outcome = decideApproval({ status: "pending", approval: "awaiting", expiresAt: EXPIRES }, first, now);
    if (outcome.kind === "refused") return t.fail(`${first} was refused: ${outcome.message}`);
    const status = outcome.kind === "cancel" ? "cancelled" : "pending";
    for (const next of DECISIONS) {
      for (const at of [0, EXPIRES, EXPIRES * 2]) {
        t.like(decideApproval({ status, approval: outcome.to, expiresAt: EXPIRES }, next, at), { kind: "refused", reason: "APPROVAL_NOT_PENDING" }, `${next} after ${first}`);
      }
    }
  }
});

test("a withdrawal cancelled some other way ends an approval that waited as cancelled, and leaves any other as it was", (t) => {
  for (const column of COLUMNS) t.is(approvalAfterCancel(column), column === "awaiting" ? "cancelled" : column, String(column));
});

test("the states the column may hold, and nothing else", (t) => {
  for (const state of APPROVAL_STATES) t.true(isApprovalState(state));
  for (const other of ["", "pending", "AWAITING", null, undefined, 1]) t.false(isApprovalState(other), String(other));
});
