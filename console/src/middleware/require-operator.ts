import { roleAtLeast, type OperatorRole } from "@payments/access";
import { totpRequiredFor } from "../identity/sign-in.js";
import type { ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";
import { seeOther } from "../shared/params.js";
import type { ConsoleMiddleware } from "../state.js";

/**
 * A page for signed-in operators: nobody signed in goes to the sign-in page; an admin or finance
 * account that must enrol TOTP (CONSOLE_REQUIRE_TOTP=1) and has not goes to the enrolment page
 * for everything but it and sign-out (`enrolling`); a role below `minRole` is refused.
 */
export function requireOperator(deps: ConsoleContext, options: { enrolling: boolean; minRole?: OperatorRole | undefined }): ConsoleMiddleware {
  return async (ctx, next) => {
    const operator = ctx.state.operator;
    if (!operator) return seeOther(ctx, "/sign-in");
    if (!options.enrolling && operator.totpSecret === null && totpRequiredFor(deps, operator)) {
      if (ctx.method === "GET" || ctx.method === "HEAD") return seeOther(ctx, "/totp");
      throw new ConsoleError(403, "TOTP_ENROLMENT_REQUIRED", "enrol two-step verification first");
    }
    if (options.minRole && !roleAtLeast(operator.role, options.minRole)) throw new ConsoleError(403, "FORBIDDEN", `needs the ${options.minRole} role`);
    await next();
  };
}
