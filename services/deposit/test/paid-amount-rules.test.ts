import test from "ava";
import { amountRelation, decideMatchedTransfer, DEFAULT_RULES, type LatePaymentRule, type OverpaymentRule, type PaidAmountRules, type UnderpaymentRule } from "../src/paid-amount-rules.js";

const UNDER: UnderpaymentRule[] = ["review", "complete"];
const OVER: OverpaymentRule[] = ["complete", "review"];
const LATE: LatePaymentRule[] = ["review", "complete", "return"];
const RELATIONS = ["exact", "under", "over"] as const;

function allRules(): PaidAmountRules[] {
  return UNDER.flatMap((underpayment) => OVER.flatMap((overpayment) => LATE.map((latePayment) => ({ underpayment, overpayment, latePayment }))));
}

test("the defaults are review, complete, review", (t) => {
  t.deepEqual(DEFAULT_RULES, { underpayment: "review", overpayment: "complete", latePayment: "review" });
});

test("amountRelation: exact, under, over", (t) => {
  t.is(amountRelation(150000, 150000), "exact");
  t.is(amountRelation(149999, 150000), "under");
  t.is(amountRelation(150001, 150000), "over");
});

// Every combination of rules, relation and lateness: 12 × 3 × 2 = 72 cases, each against the rule written out.
test("every combination decides as the rules say", (t) => {
  let cases = 0;
  for (const rules of allRules()) {
    for (const relation of RELATIONS) {
      for (const late of [false, true]) {
        const decision = decideMatchedTransfer({ late, relation }, rules);
        cases++;
        const label = JSON.stringify({ rules, relation, late });
        if (late && rules.latePayment === "return") {
          t.is(decision.action, "return", label);
          continue;
        }
        if (late && rules.latePayment === "review") {
          t.deepEqual(decision, { action: "review", late: true, reason: "late payment: the deposit had expired" }, label);
          continue;
        }
        const amountReview = (relation === "under" && rules.underpayment === "review") || (relation === "over" && rules.overpayment === "review");
        if (amountReview) {
          t.is(decision.action, "review", label);
          t.true(decision.action === "review" && decision.late === late, label);
          t.regex(decision.action === "review" ? decision.reason : "", relation === "under" ? /^underpayment/ : /^overpayment/, label);
        } else {
          t.deepEqual(decision, { action: "complete", late }, label);
        }
      }
    }
  }
  t.is(cases, 72);
});

test("an exact, timely payment always completes, whatever the rules", (t) => {
  for (const rules of allRules()) t.deepEqual(decideMatchedTransfer({ late: false, relation: "exact" }, rules), { action: "complete", late: false });
});
