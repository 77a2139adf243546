import test from "ava";
import { WithheldCreditStatus } from "@payments/contracts/payout";
import { decideWithheld, WITHHELD_CREDIT_STATUSES, withheldStatusFromProto } from "../src/withheld-credits.js";

// The withheld credit's state machine, pure: only an open record is decided, once.

test("an open record is credited or dismissed; a decided one takes no decision", (t) => {
  t.is(decideWithheld("open", "credit"), "credited");
  t.is(decideWithheld("open", "dismiss"), "dismissed");
  for (const status of ["credited", "dismissed"] as const) {
    t.is(decideWithheld(status, "credit"), undefined, status);
    t.is(decideWithheld(status, "dismiss"), undefined, status);
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
