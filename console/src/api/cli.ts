import { z } from "zod";
import { HUMAN_ASSERTION_TTL_SECONDS, signAssertion } from "@payments/access";
import { KNOWN_AUDIENCES, NoAssertionKeyError } from "../identity/assertions.js";
import { identityOf } from "../identity/operators.js";
import { createSession, deleteSession } from "../identity/sessions.js";
import { recordSignInEvent } from "../identity/sign-in-events.js";
import { signIn, type SignInRefusal } from "../identity/sign-in.js";
import { nowMs, type ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";
import type { ConsoleRoute } from "../route.js";
import { apiRoute, jsonBody } from "./body.js";

const signInSchema = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(1024),
  totp: z.string().max(16).optional(),
});

const assertionSchema = z.object({
  audience: z.string().refine((value) => KNOWN_AUDIENCES.includes(value), { message: `one of ${KNOWN_AUDIENCES.join(", ")}` }),
});

const REFUSAL_CODES: Record<SignInRefusal, [number, string, string]> = {
  invalid: [401, "INVALID_CREDENTIALS", "the email or password is not right, or the account is disabled"],
  throttled: [429, "THROTTLED", "too many failed sign-ins; try again later, or now with the password and a current authenticator code (--totp) if the account has two-step verification"],
  totp_required: [401, "TOTP_REQUIRED", "this account needs its authenticator code (totp)"],
  totp_invalid: [401, "TOTP_INVALID", "the authenticator code is not valid"],
  totp_enrolment_required: [403, "TOTP_ENROLMENT_REQUIRED", "this account must enrol two-step verification in the console (browser) first"],
};

/**
 * The CLI's session API: sign in for an opaque token (CONSOLE_CLI_SESSION_LIFETIME, stored
 * hashed, throttled and recorded like the sign-in page), ask for a 60-second assertion for one
 * audience with it, and sign out.
 */
export function cliRoutes(deps: ConsoleContext): ConsoleRoute[] {
  return [
    apiRoute("POST", "/api/cli/sessions", "api", async (ctx) => {
      const input = jsonBody(ctx, signInSchema);
      const result = await signIn(deps, { ...input, ip: ctx.state.clientIp, channel: "cli" });
      if (!result.ok) {
        const [status, code, message] = REFUSAL_CODES[result.reason];
        throw new ConsoleError(status, code, message, result.retryAfterMs !== undefined ? { "Retry-After": String(Math.ceil(result.retryAfterMs / 1000)) } : undefined);
      }
      const { secret, session } = await createSession(deps.db, { operatorId: result.operator.id, channel: "cli", now: nowMs(deps), limits: deps.limits });
      ctx.status = 201;
      ctx.body = {
        token: secret,
        expiresAt: new Date(session.expiresAt).toISOString(),
        operator: { email: result.operator.email, displayName: result.operator.displayName, role: result.operator.role },
      };
    }),
    apiRoute("POST", "/api/cli/assertions", "cli", async (ctx) => {
      const { audience } = jsonBody(ctx, assertionSchema);
      const operator = ctx.state.operator;
      // A signed-in operator, as their account is now; or a service account, as its token names it.
      const who = operator ? identityOf(operator) : ctx.state.actor;
      if (!who) throw new ConsoleError(401, "UNAUTHENTICATED", "no CLI session");
      if (!deps.privateKey) throw new ConsoleError(503, "NO_ASSERTION_KEY", new NoAssertionKeyError().message);
      const now = deps.clock.now();
      // One fresh assertion per ask, of 60 s: the CLI reuses one for reads, and asks again for every change.
      const assertion = await signAssertion(deps.privateKey, { ...who, audience, ttlSeconds: HUMAN_ASSERTION_TTL_SECONDS }, now);
      ctx.body = { assertion, audience, expiresAt: new Date(Math.floor(now.getTime() / 1000) * 1000 + HUMAN_ASSERTION_TTL_SECONDS * 1000).toISOString() };
    }),
    apiRoute("DELETE", "/api/cli/sessions", "cli", async (ctx) => {
      const { session, operator } = ctx.state;
      if (session) await deleteSession(deps.db, session.idHash);
      if (operator) await recordSignInEvent(deps.db, { event: "sign_out", channel: "cli", email: operator.email, operatorId: operator.id, ip: ctx.state.clientIp }, nowMs(deps));
      ctx.status = 204;
    }),
  ];
}
