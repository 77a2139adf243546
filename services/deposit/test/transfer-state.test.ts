import test from "ava";
import {
  decideTransferMove,
  isOpen,
  SUSPENSE_SIGN,
  suspenseHeldIn,
  TRANSFER_MOVES,
  TRANSFER_STATUSES,
  transferMoveSpec,
  type TransferMove,
  type TransferStatusName,
} from "../src/transfer-state.js";

// The incoming transfer's state machine (src/transfer-state.ts), every status against every move.

const ALLOWED: Readonly<Record<TransferMove, { from: ReadonlyArray<TransferStatusName | null>; to: TransferStatusName }>> = {
  record_matched: { from: [null], to: "matched" },
  record_review: { from: [null], to: "review" },
  record_unmatched: { from: [null], to: "unmatched" },
  match: { from: ["unmatched", "review"], to: "matched" },
  complete: { from: ["review"], to: "matched" },
  refuse: { from: ["review"], to: "unmatched" },
  request_return: { from: ["unmatched", "review"], to: "returning" },
  return_completed: { from: ["returning"], to: "returned" },
  return_failed: { from: ["returning"], to: "unmatched" },
};

const EVERY_STATUS: ReadonlyArray<TransferStatusName | null> = [null, ...TRANSFER_STATUSES];

for (const move of TRANSFER_MOVES) {
  for (const status of EVERY_STATUS) {
    const allowed = ALLOWED[move].from.includes(status);
    test(`${move} from ${status ?? "(not recorded)"} is ${allowed ? `a move to ${ALLOWED[move].to}` : "refused"}`, (t) => {
      const outcome = decideTransferMove(status, move);
      if (allowed) {
        t.like(outcome, { kind: "moved", from: status, to: ALLOWED[move].to });
      } else {
        t.is(outcome.kind, "refused");
        t.regex(outcome.kind === "refused" ? outcome.message : "", /^the transfer is .+; only an? .+ transfer can be .+$/);
      }
    });
  }
}

test("every move's suspense entry keeps suspense equal to what the open transfers hold", (t) => {
  // For each allowed move, the suspense before plus the entry it writes is what the new status holds.
  for (const move of TRANSFER_MOVES) {
    const spec = transferMoveSpec(move);
    for (const from of spec.from) {
      const before = from === null ? 0 : suspenseHeldIn(from);
      const delta = spec.suspense ? SUSPENSE_SIGN[spec.suspense] : 0;
      t.is(before + delta, suspenseHeldIn(spec.to), `${move} from ${from ?? "(new)"}`);
    }
  }
});

test("only unmatched and in-review transfers are open; a return is the only move that asks the payout service", (t) => {
  t.deepEqual(
    TRANSFER_STATUSES.filter((s) => isOpen(s)),
    ["review", "unmatched"],
  );
  t.deepEqual(
    TRANSFER_MOVES.filter((m) => transferMoveSpec(m).requestsReturn),
    ["request_return"],
  );
});

test("every move after arrival leaves an action record; arrivals leave none", (t) => {
  for (const move of TRANSFER_MOVES) {
    const spec = transferMoveSpec(move);
    t.is(spec.action === undefined, spec.from.includes(null), move);
  }
});

test("the refusal names what the move needs: an in-review transfer for a refuse, an unmatched or in-review one for a return", (t) => {
  t.like(decideTransferMove("unmatched", "refuse"), { kind: "refused", message: "the transfer is unmatched; only an in-review transfer can be refused" });
  t.like(decideTransferMove("matched", "request_return"), { kind: "refused", message: "the transfer is matched; only an unmatched or in-review transfer can be returned" });
  t.like(decideTransferMove("returned", "return_failed"), { kind: "refused", message: "the transfer is returned; only a returning transfer can be marked as a failed return" });
});

test("no code but transfer-moves.ts writes a transfer's status", async (t) => {
  const { readdir, readFile } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const src = new URL("../src/", import.meta.url).pathname;
  const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith(".ts") && !f.endsWith("transfer-moves.ts") && !f.includes("migrations"));
  const offenders: string[] = [];
  for (const file of files) {
    const text = await readFile(join(src, file), "utf8");
    // Each statement on the transfers table: an insert or update of it that sets `status` is a move written by hand.
    for (const match of text.matchAll(/\("incoming_transfers"\)[^;]*?\.(update|insert)\(([^;]*?)\);/gs)) {
      if (/\bstatus\b/.test(match[2]!)) offenders.push(`${file}: ${match[0].slice(0, 120)}`);
    }
  }
  t.deepEqual(offenders, []);
});
