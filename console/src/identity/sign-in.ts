import type { OperatorRole } from "@payments/access";
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

/** What sign-in needs of an account, operator or merchant user alike. */
export interface SignInAccount {
  id: string;
  email: string;
  disabled: boolean;
  passwordHash: string | null;
  totpSecret: string | null;
  totpLastStep: number | null;
}

/** Where sign-in finds and updates accounts: the operators, or the merchant users (auth/merchant-sign-in.ts). */
export interface AccountSource<A extends SignInAccount> {
  find(email: string): Promise<A | undefined>;
  update(id: string, patch: { lastSignInAt: number; totpLastStep?: number; passwordHash?: string }): Promise<void>;
  /** The throttle's account key (merchant users' are prefixed, so one email in both tables counts apart). */
  throttleKey(email: string): string;
  /** Which account a sign-in event names. */
  eventOwner(account: A): { operatorId?: string; merchantUserId?: string };
  /** The CLI cannot enrol: true when this account must have TOTP and has none. */
  cliNeedsEnrolment(account: A): boolean;
}

export type AccountSignInResult<A> = { ok: true; account: A } | { ok: false; reason: SignInRefusal; retryAfterMs?: number };

type SignInInput = { email: string; password: string; totp?: string | undefined; ip: string; channel: "browser" | "cli" };

/** The valid, unused TOTP step `code` is of `account`, or why not. */
function codeStep(ctx: ConsoleContext, account: SignInAccount & { totpSecret: string }, code: string): number | "bad_totp" | "totp_replayed" {
  const step = totpStep(ctx.totp.open(account.totpSecret), code, ctx.clock.now());
  if (step === undefined) return "bad_totp";
  if (account.totpLastStep !== null && step <= account.totpLastStep) return "totp_replayed";
  return step;
}

/**
 * Checks an email, a password and (when the account has enrolled) a TOTP code, for the sign-in
 * pages and the CLI alike: throttled (auth/sign-in-throttle.ts), every outcome recorded. The CLI
 * cannot enrol, so an account that must have TOTP and has none is refused there until it
 * enrols in the browser; the browser lets it in to the enrolment page only.
 *
 * While the throttle locks an attempt out, it is judged apart (lockedSignIn): guessing goes on
 * answering 429, but the account's owner with the password and a current code still gets in.
 */
export async function signInWith<A extends SignInAccount>(ctx: ConsoleContext, input: SignInInput, source: AccountSource<A>): Promise<AccountSignInResult<A>> {
  const email = normaliseEmail(input.email);
  const key = source.throttleKey(email);
  const base = { channel: input.channel, email, ip: input.ip };
  const retryAfterMs = ctx.throttle.check(key, input.ip, nowMs(ctx));
  if (retryAfterMs !== undefined) return lockedSignIn(ctx, input, source, retryAfterMs);
  const fail = async (reason: SignInRefusal, why: string, account?: A, counts = true): Promise<AccountSignInResult<A>> => {
    if (counts) ctx.throttle.failed(key, input.ip, nowMs(ctx));
    await recordSignInEvent(ctx.db, { ...base, event: "sign_in_failed", ...(account ? source.eventOwner(account) : {}), reason: why }, nowMs(ctx));
    return { ok: false, reason };
  };

  const account = await source.find(email);
  // Always one scrypt: an unknown email answers as slowly as a wrong password.
  const matches = await verifyPassword(input.password, account?.passwordHash ?? (await decoyHash()));
  if (!account) return fail("invalid", "unknown_email");
  if (!account.passwordHash || !matches) return fail("invalid", account.passwordHash ? "bad_password" : "no_password", account);
  if (account.disabled) return fail("invalid", "disabled", account);

  let step: number | undefined;
  if (account.totpSecret !== null) {
    // The password was right: asking for the code is not a failed guess.
    if (!input.totp) return fail("totp_required", "totp_missing", account, false);
    const checked = codeStep(ctx, { ...account, totpSecret: account.totpSecret }, input.totp);
    if (typeof checked !== "number") return fail("totp_invalid", checked, account);
    step = checked;
  } else if (input.channel === "cli" && source.cliNeedsEnrolment(account)) {
    return fail("totp_enrolment_required", "totp_not_enrolled", account, false);
  }
  return signedIn(ctx, input, source, account, step);
}

async function signedIn<A extends SignInAccount>(ctx: ConsoleContext, input: SignInInput, source: AccountSource<A>, account: A, step: number | undefined): Promise<AccountSignInResult<A>> {
  const now = nowMs(ctx);
  await source.update(account.id, {
    lastSignInAt: now,
    ...(step !== undefined ? { totpLastStep: step } : {}),
    // Raised cost parameters reach each account at its next sign-in, the only time the password is known.
    ...(account.passwordHash !== null && needsRehash(account.passwordHash) ? { passwordHash: await hashPassword(input.password) } : {}),
  });
  ctx.throttle.succeeded(source.throttleKey(account.email), input.ip, now);
  await recordSignInEvent(ctx.db, { channel: input.channel, email: account.email, ip: input.ip, event: "sign_in", ...source.eventOwner(account) }, now);
  return { ok: true, account: { ...account, lastSignInAt: now } };
}

/**
 * An attempt the throttle locks out. Only the account's own second factor opens a lock: an
 * attempt carrying a TOTP code for an account that has TOTP has the code checked first (an HMAC:
 * cheap, and a wrong one says nothing of the password), then, for a valid unused code, the
 * password (one scrypt round). Everything else (no code, no TOTP on the account, an unknown
 * email, a wrong or used code, a wrong password, a disabled account) answers the same 429 and
 * counts as a failure, and no scrypt runs for an attempt that cannot succeed, so a flood costs
 * the console no more than its lookups. A party without the code cannot keep the owner out;
 * one holding the password can only guess codes, each a refusal.
 */
async function lockedSignIn<A extends SignInAccount>(ctx: ConsoleContext, input: SignInInput, source: AccountSource<A>, retryAfterMs: number): Promise<AccountSignInResult<A>> {
  const email = normaliseEmail(input.email);
  const refuse = async (why: string, account?: A): Promise<AccountSignInResult<A>> => {
    ctx.throttle.failed(source.throttleKey(email), input.ip, nowMs(ctx));
    await recordSignInEvent(ctx.db, { channel: input.channel, email, ip: input.ip, event: "sign_in_throttled", ...(account ? source.eventOwner(account) : {}), reason: why }, nowMs(ctx));
    return { ok: false, reason: "throttled", retryAfterMs };
  };
  if (!input.totp) return refuse("locked");
  const account = await source.find(email);
  if (!account || account.totpSecret === null) return refuse("locked", account);
  const step = codeStep(ctx, { ...account, totpSecret: account.totpSecret }, input.totp);
  if (typeof step !== "number") return refuse(step, account);
  if (!account.passwordHash || !(await verifyPassword(input.password, account.passwordHash))) return refuse("bad_password", account);
  if (account.disabled) return refuse("disabled", account);
  return signedIn(ctx, input, source, account, step);
}

/** An operator's sign-in (the sign-in page, the CLI's session API). */
export async function signIn(ctx: ConsoleContext, input: { email: string; password: string; totp?: string | undefined; ip: string; channel: "browser" | "cli" }): Promise<SignInResult> {
  const result = await signInWith<Operator>(ctx, input, {
    find: (email) => findOperatorByEmail(ctx.db, email),
    update: (id, patch) => updateOperator(ctx.db, id, patch),
    throttleKey: (email) => email,
    eventOwner: (operator) => ({ operatorId: operator.id }),
    cliNeedsEnrolment: (operator) => totpRequiredFor(ctx, operator),
  });
  return result.ok ? { ok: true, operator: result.account } : result;
}
