import test from "ava";
import {
  decideWithdrawalMove,
  isFinal,
  isWithdrawalStatus,
  WITHDRAWAL_STATUSES,
  type BalanceEffect,
  type WithdrawalMove,
  type WithdrawalStatusName,
} from "../src/withdrawal-state.js";

const MOVES: WithdrawalMove[] = ["start", "complete", "fail", "cancel"];

// decisions.md: pending → processing → completed | failed, and pending → cancelled.
// failed and cancelled give the held amount back; completed pays it out.
const EXPECTED: Record<WithdrawalMove, { from: WithdrawalStatusName; to: WithdrawalStatusName; effect: BalanceEffect }> = {
  start: { from: "pending", to: "processing", effect: "none" },
  complete: { from: "processing", to: "completed", effect: "settle" },
  fail: { from: "processing", to: "failed", effect: "release" },
  cancel: { from: "pending", to: "cancelled", effect: "release" },
};

test("every move from every status: exactly the documented transitions apply, everything else is refused", (t) => {
  for (const status of WITHDRAWAL_STATUSES) {
    for (const move of MOVES) {
      const outcome = decideWithdrawalMove(status, move);
      const expected = EXPECTED[move];
      if (status === expected.from) t.deepEqual(outcome, { kind: "moved", ...expected }, `${move} from ${status}`);
      else t.is(outcome.kind, "refused", `${move} from ${status}`);
    }
  }
});

test("the balance effect of each move: start holds on, complete settles, fail and cancel release", (t) => {
  const effects = MOVES.map((move) => {
    const outcome = decideWithdrawalMove(EXPECTED[move].from, move);
    return outcome.kind === "moved" ? outcome.effect : outcome.kind;
  });
  t.deepEqual(effects, ["none", "settle", "release", "release"]);
});

test("over each whole life the hold is undone: completed pays the amount out, failed and cancelled give it all back", (t) => {
  // The deltas withdrawal-moves.ts posts for each effect, after the creation's hold of (−amount, +amount).
  const amount = 100;
  const DELTAS: Record<BalanceEffect, { available: number; held: number }> = {
    none: { available: 0, held: 0 },
    release: { available: amount, held: -amount },
    settle: { available: 0, held: -amount },
  };
  const lives: Array<[WithdrawalMove[], WithdrawalStatusName, number]> = [
    [["cancel"], "cancelled", 0],
    [["start", "complete"], "completed", -amount],
    [["start", "fail"], "failed", 0],
  ];
  for (const [moves, final, availableChange] of lives) {
    let status: WithdrawalStatusName = "pending";
    const balance = { available: -amount, held: amount };
    for (const move of moves) {
      const outcome = decideWithdrawalMove(status, move);
      if (outcome.kind !== "moved") return t.fail(`${move} from ${status} was ${outcome.kind}`);
      balance.available += DELTAS[outcome.effect].available;
      balance.held += DELTAS[outcome.effect].held;
      status = outcome.to;
    }
    t.is(status, final);
    t.deepEqual(balance, { available: availableChange, held: 0 }, moves.join(" → "));
  }
});

test("completed, failed and cancelled are final: no move leaves them, even an idempotent one", (t) => {
  for (const status of ["completed", "failed", "cancelled"] as const) {
    t.true(isFinal(status));
    for (const move of MOVES) {
      for (const idempotent of [false, true]) {
        t.not(decideWithdrawalMove(status, move, { idempotent }).kind, "moved", `${move} from ${status}`);
      }
    }
  }
  t.false(isFinal("pending"));
  t.false(isFinal("processing"));
});

test("cancel is idempotent when asked: a cancelled withdrawal cancelled again is unchanged, not refused", (t) => {
  t.deepEqual(decideWithdrawalMove("cancelled", "cancel", { idempotent: true }), { kind: "unchanged", status: "cancelled" });
  // Without the option a repeat is refused, and idempotence never reaches across statuses.
  t.is(decideWithdrawalMove("cancelled", "cancel").kind, "refused");
  for (const status of ["processing", "completed", "failed"] as const) {
    t.is(decideWithdrawalMove(status, "cancel", { idempotent: true }).kind, "refused", status);
  }
});

test("a processing withdrawal cannot be cancelled: the money may already be on its way", (t) => {
  const outcome = decideWithdrawalMove("processing", "cancel", { idempotent: true });
  t.deepEqual(outcome, { kind: "refused", status: "processing", message: "the withdrawal is processing; only a pending withdrawal can be cancelled" });
});

test("a pending withdrawal cannot be completed or failed before the worker took it", (t) => {
  t.like(decideWithdrawalMove("pending", "complete"), { kind: "refused", status: "pending" });
  t.like(decideWithdrawalMove("pending", "fail"), { kind: "refused", status: "pending" });
});

test("a refusal says what the withdrawal is and which status the move needs", (t) => {
  const outcome = decideWithdrawalMove("completed", "fail");
  t.is(outcome.kind === "refused" ? outcome.message : "", "the withdrawal is completed; only a processing withdrawal can be failed");
  const start = decideWithdrawalMove("cancelled", "start");
  t.is(start.kind === "refused" ? start.message : "", "the withdrawal is cancelled; only a pending withdrawal can be processed");
});

test("exactly the five documented statuses are withdrawal statuses", (t) => {
  t.deepEqual([...WITHDRAWAL_STATUSES], ["pending", "processing", "completed", "failed", "cancelled"]);
  for (const status of WITHDRAWAL_STATUSES) t.true(isWithdrawalStatus(status));
  for (const other of ["", "expired", "PENDING", "canceled"]) t.false(isWithdrawalStatus(other), other);
});
