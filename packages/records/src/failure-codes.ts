/*
 * The codes a withdrawal's `failureReason` carries when it failed at the bank: what a bank
 * connector answers (the sandbox bank's outcomes, services/payout/README.md) and what an
 * operator records for a payout the bank refused (`pnpm cli withdrawal fail --reason`). The
 * payout service takes any code of capital letters, digits and underscores (up to 100; lower
 * case is upper-cased), so a bank's own code can be kept as it came; these are the ones every
 * merchant integration should expect.
 */

/** The common failure codes, each with what it means. */
export const WITHDRAWAL_FAILURE_CODES = {
  ACCOUNT_NOT_FOUND: "no account has this IBAN",
  NAME_MISMATCH: "the recipient's name does not match the account holder's",
  ACCOUNT_CLOSED: "the account is closed",
} as const satisfies Record<string, string>;

export type WithdrawalFailureCode = keyof typeof WITHDRAWAL_FAILURE_CODES;

/** The longest failure code the payout service keeps. */
export const FAILURE_CODE_MAX = 100;

const CODE = /^[A-Z0-9_]+$/;

/** The common codes in words, e.g. for a help text or a refusal: "ACCOUNT_NOT_FOUND, NAME_MISMATCH, ACCOUNT_CLOSED". */
export const WITHDRAWAL_FAILURE_CODE_LIST = Object.keys(WITHDRAWAL_FAILURE_CODES).join(", ");

/**
 * A failure reason as the payout service will keep it (trimmed, upper-cased), or the problem
 * with it, naming the accepted codes; text that only needs its spaces or hyphens made
 * underscores ("account closed") gets the code it meant suggested.
 */
export function failureCodeOf(text: string): { code: string } | { problem: string } {
  const code = text.trim().toUpperCase();
  if (code.length > 0 && code.length <= FAILURE_CODE_MAX && CODE.test(code)) return { code };
  const meant = code.replace(/[\s-]+/g, "_");
  const suggestion = CODE.test(meant) && /[A-Z0-9]/.test(meant) && meant.length <= FAILURE_CODE_MAX ? ` (did you mean ${meant}?)` : "";
  const what = code === "" ? "It is empty" : code.length > FAILURE_CODE_MAX ? `It is ${code.length} characters long` : "It is not a code";
  return {
    problem: `${what}${suggestion}. A failure reason is one of ${WITHDRAWAL_FAILURE_CODE_LIST}, or another code of letters, digits and underscores (up to ${FAILURE_CODE_MAX}) as the bank gave it`,
  };
}
