import { isMerchantUser, isOperatorRole } from "@payments/access";
import { AssertionError } from "@payments/access";
import { findOperatorById, identityOf } from "../identity/operators.js";
import { resumeSession } from "../identity/sessions.js";
import { nowMs, type ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";
import type { ConsoleContextKoa, ConsoleMiddleware } from "../state.js";

function bearer(ctx: ConsoleContextKoa): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get("authorization"));
  return match?.[1];
}

function unauthenticated(message: string): ConsoleError {
  return new ConsoleError(401, "UNAUTHENTICATED", message, { "WWW-Authenticate": 'Bearer realm="console"' });
}

/** A JWT (three base64url parts): an assertion; anything else is an opaque CLI token. */
function looksLikeAssertion(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/** The identity a valid assertion names; an invalid one is 401. */
async function verifiedAssertion(deps: ConsoleContext, token: string) {
  try {
    return await deps.assertions.verify(token);
  } catch (err) {
    if (err instanceof AssertionError) throw unauthenticated(err.message);
    throw err;
  }
}

/**
 * The bearer token's identity when it is an assertion (verified); else the CLI session it names,
 * put on the state (`undefined` back). No token: 401 with `missing`.
 */
async function bearerIdentity(deps: ConsoleContext, ctx: ConsoleContextKoa, missing: string) {
  const token = bearer(ctx);
  if (!token) throw unauthenticated(missing);
  if (looksLikeAssertion(token)) return verifiedAssertion(deps, token);
  await cliSession(deps, ctx, token);
  return undefined;
}

async function cliSession(deps: ConsoleContext, ctx: ConsoleContextKoa, token: string): Promise<void> {
  const session = await resumeSession(deps.db, token, "cli", nowMs(deps), deps.limits);
  const operator = session ? await findOperatorById(deps.db, session.operatorId) : undefined;
  if (!session || !operator || operator.disabled) throw unauthenticated("the CLI session has ended: run `login` again");
  ctx.state.session = session;
  ctx.state.operator = operator;
}

/**
 * The CLI's own endpoints: a live CLI session's token (`login`), for its enabled account, or a
 * service account's token (`operator token`, an assertion for the console of kind `service`),
 * which the CLI exchanges here for one 60-second assertion per call.
 */
export function cliAuth(deps: ConsoleContext): ConsoleMiddleware {
  return async (ctx, next) => {
    const identity = await bearerIdentity(deps, ctx, "send the CLI session token as Authorization: Bearer <token>");
    if (identity) {
      if (isMerchantUser(identity) || identity.kind !== "service") throw unauthenticated("a person's assertion is no CLI session: run `login`");
      ctx.state.actor = identity;
    }
    await next();
  };
}

/**
 * The admin API: an admin's CLI session, or a valid assertion for the `console` audience with the
 * admin role (a person's 60-second one, or a service account's token minted with the key).
 */
export function adminAuth(deps: ConsoleContext): ConsoleMiddleware {
  return async (ctx, next) => {
    const identity = await bearerIdentity(deps, ctx, "send an admin's CLI session token or an admin assertion as Authorization: Bearer <token>");
    if (identity) {
      // A merchant user's assertion never opens the admin API, whatever it claims.
      if (isMerchantUser(identity) || !isOperatorRole(identity.role) || identity.role !== "admin") throw new ConsoleError(403, "FORBIDDEN", "the admin API needs the admin role");
      ctx.state.actor = identity;
    } else {
      const operator = ctx.state.operator;
      if (operator?.role !== "admin") throw new ConsoleError(403, "FORBIDDEN", "the admin API needs the admin role");
      ctx.state.actor = identityOf(operator);
    }
    await next();
  };
}
