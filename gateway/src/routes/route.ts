import type { RouteHandler } from "../state.js";

/** One endpoint; app.ts puts the right middleware in front of it. */
export interface Route {
  method: "GET" | "POST";
  /** @koa/router pattern. */
  path: string;
  /** "merchant": signed request (body, authentication, IP, rate limit, JSON). "public": none of it. */
  access: "merchant" | "public";
  /** Refuse callers outside the merchant's allow-list even when that list is empty (withdrawals). */
  requireAllowList?: boolean;
  handler: RouteHandler;
}
