import type { MerchantRole, OperatorRole } from "@payments/access";
import type { RouteHandler } from "./state.js";

/**
 * Who may reach a route, and so which checks app.ts puts in front of its handler:
 * - `public`: anyone (sign-in, set-password); a state-changing request needs the pre-session CSRF token.
 * - `operator`: a signed-in operator with a browser session, past TOTP enrolment when it is required,
 *   of at least `minRole`; a state-changing request needs the session's CSRF token.
 * - `enrolling`: as `operator`, but reachable before a required TOTP enrolment (the enrolment page, sign-out).
 * - `api`: JSON for programs, no cookie read (so no CSRF): the route authenticates itself (sign-in) or uses `cli`.
 * - `cli`: a CLI session's bearer token.
 * - `admin`: the admin API: an admin's CLI session, or an admin assertion for the console.
 * - `merchant`: a signed-in merchant user (the merchant dashboard, `/merchant/...`) with a browser
 *   session of its own (`merchant_sessions`, never an operator's), of one of `merchantRoles`; a
 *   state-changing request needs that session's CSRF token.
 * - `merchant-public`: the merchant dashboard's pages before sign-in (sign-in, set-password); a
 *   state-changing request needs the pre-session CSRF token.
 *
 * CONSOLE_AUDIENCE decides which side exists: `merchant*` routes only with `merchants` or `both`;
 * `public`, `operator`, `enrolling`, `cli`, `admin` and `/api/...` routes only with `operators` or `both`.
 */
export type RouteAccess = "public" | "operator" | "enrolling" | "api" | "cli" | "admin" | "merchant" | "merchant-public";

export interface ConsoleRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  access: RouteAccess;
  /** For `operator` routes: the least role that may use it (viewer when not given). */
  minRole?: OperatorRole;
  /** For `merchant` routes: the merchant roles admitted (every role when not given); any other role gets the 403 page. */
  merchantRoles?: readonly MerchantRole[];
  /**
   * For `operator` POST routes at a fixed path: the route also takes multipart/form-data (a
   * file), read after the session and role are checked, up to CONSOLE_UPLOAD_LIMIT; the CSRF
   * token comes in the form's hidden field or the header as for any form.
   */
  upload?: boolean;
  handler: RouteHandler;
}
