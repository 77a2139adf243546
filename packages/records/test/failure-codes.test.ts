import test from "ava";
import { failureCodeOf, WITHDRAWAL_FAILURE_CODE_LIST, WITHDRAWAL_FAILURE_CODES } from "../src/index.js";

test("a failure reason is a code: trimmed and upper-cased, letters, digits and underscores, up to 100", (t) => {
  t.deepEqual(failureCodeOf("ACCOUNT_CLOSED"), { code: "ACCOUNT_CLOSED" });
  t.deepEqual(failureCodeOf("  iban_blocked_2 "), { code: "IBAN_BLOCKED_2" });
  t.deepEqual(failureCodeOf("X".repeat(100)), { code: "X".repeat(100) });
  t.is(WITHDRAWAL_FAILURE_CODE_LIST, "ACCOUNT_NOT_FOUND, NAME_MISMATCH, ACCOUNT_CLOSED");
  t.deepEqual(Object.keys(WITHDRAWAL_FAILURE_CODES), ["ACCOUNT_NOT_FOUND", "NAME_MISMATCH", "ACCOUNT_CLOSED"]);
});

test("anything else names the accepted codes, and the code plain text meant", (t) => {
  const problem = (text: string): string => {
    const result = failureCodeOf(text);
    if ("problem" in result) return result.problem;
    t.fail(`${text} was accepted`);
    return "";
  };
  t.regex(problem("account closed"), /^It is not a code \(did you mean ACCOUNT_CLOSED\?\)\. A failure reason is one of ACCOUNT_NOT_FOUND, NAME_MISMATCH, ACCOUNT_CLOSED, or another code/);
  t.regex(problem(" - "), /^It is not a code\. /);
  t.regex(problem("   "), /^It is empty\. /);
  t.regex(problem("A".repeat(101)), /^It is 101 characters long\. /);
  t.regex(problem("hesap/kapalı"), /^It is not a code\. A failure reason/);
});
