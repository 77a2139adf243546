import type { ParameterizedContext, Middleware } from "koa";
import type { RouterContext, RouterMiddleware } from "@koa/router";
import type { MerchantCredentials } from "./credential-cache.js";

/** What the middleware chain learns about a request, in the order it learns it. */
export interface GatewayState {
  requestId: string;
  /** The exact bytes received (read-body). */
  rawBody?: Buffer;
  /** The authenticated merchant (authenticate). */
  merchant?: MerchantCredentials;
  /** The caller's address after the trusted-proxy rule (ip-allowlist). */
  clientIp?: string;
  /** The parsed JSON object of a POST (json-body). */
  body?: Record<string, unknown>;
  /** The route pattern that matched, for logs and metrics. */
  route?: string;
}

export type GatewayContext = ParameterizedContext<GatewayState>;
export type GatewayMiddleware = Middleware<GatewayState>;
export type RouteContext = RouterContext<GatewayState>;
export type RouteHandler = RouterMiddleware<GatewayState>;
