import type { OperatorRole } from "@payments/kit";
import { nowMs, type ConsoleContext } from "../context.js";
import { findOperatorByEmail, normaliseEmail, updateOperator, type Operator } from "./operators.js";
import { decoyHash, hashPassword, needsRehash, verifyPassword } from "./password.js";
import { recordSignInEvent } from "./sign-in-events.js";
import { totpStep } from "./totp.js";

/** Why a sign-in was refused. `invalid` covers unknown email, wrong password, disabled account and no password yet alike. */
export type SignInRefusal = "invalid" | "throttled" | "totp_required" | "totp_invalid" | "totp_enrolment_required";

export type SignInResult = { ok: true; operator: Operator } | { ok: false; reason: SignInRefusal; retryAfterMs?: number };

/** Roles that must have a second factor when CONSOLE_REQUIRE_TOTP=1: they move money and grant access. */
const TOTP_ROLES: ReadonlySet<OperatorRole> = new Set(["admin", "finance"]);

export function totpRequiredFor(ctx: Pick<ConsoleContext, "config">, operator: Pick<Operator, "role">): boolean {
  return ctx.config.CONSOLE_REQUIRE_TOTP && TOTP_ROLES.has(operator.role);
}

/**
 * Checks an email, a password and (when the account has enrolled) a TOTP code, for the sign-in
 * page and the CLI alike: throttled per account and per IP, every outcome recorded. The CLI
 * cannot enrol, so an account that must have TOTP and has none is refused there until it
 * enrols in the browser; the browser lets it in to the enrolment page only.
 */
export async function signIn(ctx: ConsoleContext, input: { email: string; password: string; totp?: string | undefined; ip: string; channel: "browser" | "cli" }): Promise<SignInResult> {
  const email = normaliseEmail(input.email);
  const base = { channel: input.channel, email, ip: input.ip };
  const retryAfterMs = await ctx.throttle.retryAfter(email, input.ip);
  if (retryAfterMs !== undefined) {
    await recordSignInEvent(ctx.db, { ...base, event: "sign_in_throttled" }, nowMs(ctx));
    return { ok: false, reason: "throttled", retryAfterMs };
  }
  const fail = async (reason: SignInRefusal, why: string, operator?: Operator, counts = true): Promise<SignInResult> => {
    if (counts) await ctx.throttle.failed(email, input.ip);
    await recordSignInEvent(ctx.db, { ...base, event: "sign_in_failed", operatorId: operator?.id, reason: why }, nowMs(ctx));
    return { ok: false, reason };
  };

  const operator = await findOperatorByEmail(ctx.db, email);
  // Always one scrypt: an unknown email answers as slowly as a wrong password.
  const matches = await verifyPassword(input.password, operator?.passwordHash ?? (await decoyHash()));
  if (!operator) return fail("invalid", "unknown_email");
  if (!operator.passwordHash || !matches) return fail("invalid", operator.passwordHash ? "bad_password" : "no_password", operator);
  if (operator.disabled) return fail("invalid", "disabled", operator);

  let step: number | undefined;
  if (operator.totpSecret !== null) {
    // The password was right: asking for the code is not a failed guess.
    if (!input.totp) return fail("totp_required", "totp_missing", operator, false);
    step = totpStep(ctx.totp.open(operator.totpSecret), input.totp, ctx.clock.now());
    if (step === undefined) return fail("totp_invalid", "bad_totp", operator);
    if (operator.totpLastStep !== null && step <= operator.totpLastStep) return fail("totp_invalid", "totp_replayed", operator);
  } else if (input.channel === "cli" && totpRequiredFor(ctx, operator)) {
    return fail("totp_enrolment_required", "totp_not_enrolled", operator, false);
  }

  const now = nowMs(ctx);
  await updateOperator(ctx.db, operator.id, {
    lastSignInAt: now,
    ...(step !== undefined ? { totpLastStep: step } : {}),
    // Raised cost parameters reach each account at its next sign-in, the only time the password is known.
    ...(needsRehash(operator.passwordHash) ? { passwordHash: await hashPassword(input.password) } : {}),
  });
  await ctx.throttle.succeeded(email);
  await recordSignInEvent(ctx.db, { ...base, event: "sign_in", operatorId: operator.id }, now);
  return { ok: true, operator: { ...operator, lastSignInAt: now } };
}
