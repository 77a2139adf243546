import type { Middleware, ParameterizedContext } from "koa";
import type { RouterContext, RouterMiddleware } from "@koa/router";
import type { MerchantUser } from "./identity/merchant-users.js";
import type { Operator } from "./identity/operators.js";
import type { Actor } from "./identity/operator-admin.js";
import type { Session } from "./identity/sessions.js";
import type { Language } from "./shared/i18n.js";
import type { Mode } from "./shared/mode.js";
import type { UploadedFile } from "./middleware/read-multipart.js";

/** What the middleware chain learns about a request, in the order it learns it. */
export interface ConsoleState {
  /** The CSP nonce of this response: the only inline style and script that may run (security-headers). */
  nonce: string;
  /** The caller's address after TRUSTED_PROXIES (client-ip). */
  clientIp: string;
  /** The language pages answer in (language). */
  lang: Language;
  /** Live or sandbox: what lists, figures and charts show (shared/mode.ts). */
  mode: Mode;
  /** Whether the mode was chosen (the query or the cookie), not the default: the merchant dashboard then opens on the merchant's own kind. */
  modeChosen?: boolean;
  /** The route pattern that matched, for logs and metrics. */
  route?: string;
  /** A form body's fields (read-body). */
  form?: Record<string, string>;
  /** The file of a multipart form (read-multipart, upload routes only). */
  upload?: UploadedFile;
  /** A JSON body (read-body), validated by the route that takes it. */
  json?: unknown;
  /** The signed-in operator's session and account (browser session or CLI token). */
  session?: Session;
  operator?: Operator;
  /**
   * The signed-in merchant user and their merchant session (merchant-session, `merchant` routes):
   * never set together with `operator`/`session`, which are an operator's only.
   */
  merchantUser?: MerchantUser;
  merchantSession?: Session;
  /** The merchant's name for the merchant layout's header (the merchant id when the service did not say). */
  merchantName?: string;
  /** Who calls the admin API: an admin's CLI session or an admin assertion (admin-auth). */
  actor?: Actor;
}

export type ConsoleContextKoa = ParameterizedContext<ConsoleState>;
export type ConsoleMiddleware = Middleware<ConsoleState>;
export type RouteContext = RouterContext<ConsoleState>;
export type RouteHandler = RouterMiddleware<ConsoleState>;
