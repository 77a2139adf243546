import test from "ava";
import { WithheldCreditStatus } from "@payments/contracts/payout";
import { decideWithheld, WITHHELD_CREDIT_STATUSES, withheldStatusFromProto, type WithheldDecision } from "../src/withheld-credits.js";

// The withheld credit's state machine, pure: only an open record is decided, once.

const DECISIONS: readonly WithheldDecision[] = ["credit", "dismiss"];

test("an open record is credited (posting the deposit's credit) or dismissed (posting nothing)", (t) => {
  t.deepEqual(decideWithheld("open", "credit"), { kind: "moved", from: "open", to: "credited", effect: "deposit_credit" });
  t.deepEqual(decideWithheld("open", "dismiss"), { kind: "moved", from: "open", to: "dismissed", effect: "none" });
});

test("a decided record refuses every decision, a repeat of its own included, naming its status", (t) => {
  for (const status of ["credited", "dismissed"] as const) {
    for (const decision of DECISIONS) {
      t.deepEqual(
        decideWithheld(status, decision),
        { kind: "refused", status, message: `the withheld credit is ${status}; only an open one can be decided` },
        `${status} ${decision}`,
      );
      t.deepEqual(
        decideWithheld(status, decision, "withheld credit whc_1"),
        { kind: "refused", status, message: `withheld credit whc_1 is ${status}; only an open one can be decided` },
        `${status} ${decision}, named`,
      );
    }
  }
});

test("every status and decision has an answer: moved only from open, refused otherwise", (t) => {
  for (const status of WITHHELD_CREDIT_STATUSES) {
    for (const decision of DECISIONS) {
      const outcome = decideWithheld(status, decision);
      t.is(outcome.kind, status === "open" ? "moved" : "refused", `${status} ${decision}`);
      if (outcome.kind === "moved") t.true(outcome.to !== "open" && outcome.to !== status, `${status} ${decision} leaves open`);
    }
  }
});

test("every status has its proto enum and back; unspecified and unknown values are none", (t) => {
  t.deepEqual(
    WITHHELD_CREDIT_STATUSES.map((s) => withheldStatusFromProto(WithheldCreditStatus[s.toUpperCase() as "OPEN" | "CREDITED" | "DISMISSED"])),
    [...WITHHELD_CREDIT_STATUSES],
  );
  t.is(withheldStatusFromProto(WithheldCreditStatus.UNSPECIFIED), undefined);
  t.is(withheldStatusFromProto(42 as WithheldCreditStatus), undefined);
});
