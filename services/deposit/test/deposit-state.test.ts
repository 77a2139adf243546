import test from "ava";
import { acceptsPayment, decideMove, DEPOSIT_STATUSES, isFinal, type DepositMove } from "../src/deposit-state.js";

const MOVES: DepositMove[] = ["complete", "fail", "expire", "cancel"];
const TARGET: Record<DepositMove, string> = { complete: "completed", complete_late: "completed", fail: "failed", expire: "expired", cancel: "cancelled" };

test("from pending every move applies and leads to its own final status", (t) => {
  for (const move of MOVES) {
    t.deepEqual(decideMove("pending", move), { kind: "moved", from: "pending", to: TARGET[move] as never }, move);
  }
});

test("a late payment is the one move out of expired: it completes an expired deposit and nothing else", (t) => {
  for (const status of DEPOSIT_STATUSES) {
    const outcome = decideMove(status, "complete_late");
    if (status === "expired") t.deepEqual(outcome, { kind: "moved", from: "expired", to: "completed" });
    else t.is(outcome.kind, "refused", status);
  }
  t.is(decideMove("pending", "complete_late").kind === "refused" ? (decideMove("pending", "complete_late") as { message: string }).message : "", "the deposit is pending; only an expired deposit can be completed late");
});

test("every status but pending is final and no move of the four leaves it", (t) => {
  for (const status of DEPOSIT_STATUSES.filter((s) => s !== "pending")) {
    t.true(isFinal(status));
    for (const move of MOVES) {
      const outcome = decideMove(status, move);
      t.is(outcome.kind, "refused", `${move} from ${status}`);
      t.true(outcome.kind === "refused" && outcome.message.includes(`the deposit is ${status}`));
    }
  }
  t.false(isFinal("pending"));
});

test("an idempotent move repeated on its own result is unchanged, not refused, and still refused from another final status", (t) => {
  t.deepEqual(decideMove("cancelled", "cancel", { idempotent: true }), { kind: "unchanged", status: "cancelled" });
  t.is(decideMove("completed", "cancel", { idempotent: true }).kind, "refused");
  t.is(decideMove("expired", "cancel", { idempotent: true }).kind, "refused");
  // Not idempotent: a second confirmation could carry another amount.
  t.is(decideMove("completed", "complete").kind, "refused");
});

test("a refusal says what the deposit is and which status the move needs", (t) => {
  const outcome = decideMove("expired", "complete");
  t.is(outcome.kind === "refused" ? outcome.message : "", "the deposit is expired; only a pending deposit can be completed");
});

test("only a pending deposit accepts a payment through its checkout", (t) => {
  t.deepEqual(
    DEPOSIT_STATUSES.filter((s) => acceptsPayment(s)),
    ["pending"],
  );
});
