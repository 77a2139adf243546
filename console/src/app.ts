import { modeMiddleware } from "./shared/mode.js";
import { stylesheetRoutes } from "./shared/styles.js";
import Koa from "koa";
import Router from "@koa/router";
import { cliRoutes } from "./api/cli.js";
import { operatorRoutes } from "./api/operators.js";
import { merchantUserRoutes } from "./api/merchant-users.js";
import { auditChainRoutes } from "./api/audit-chain.js";
import type { ConsoleContext } from "./context.js";
import { accessLog } from "./middleware/access-log.js";
import { adminAuth, cliAuth } from "./middleware/bearer-auth.js";
import { browserSession } from "./middleware/browser-session.js";
import { clientIp } from "./middleware/client-ip.js";
import { preSessionCsrf, sessionCsrf } from "./middleware/csrf.js";
import { errorHandler } from "./middleware/error-handler.js";
import { language } from "./middleware/language.js";
import { metricsEndpoint } from "./middleware/metrics-endpoint.js";
import { readBody } from "./middleware/read-body.js";
import { readMultipart } from "./middleware/read-multipart.js";
import { requireOperator } from "./middleware/require-operator.js";
import { securityHeaders } from "./middleware/security-headers.js";
import { homePages } from "./operator/home/index.js";
import { setPasswordPages } from "./operator/set-password/index.js";
import { signInPages } from "./operator/sign-in/index.js";
import { totpPages } from "./operator/totp/index.js";
import { transferPages } from "./operator/transfers/index.js";
import { statementPages } from "./operator/statements/index.js";
import { approvalPages } from "./operator/approvals/index.js";
import { auditPages } from "./operator/audit/index.js";
import { reconciliationPages } from "./operator/reconciliation/index.js";
import { depositPages } from "./operator/deposits/index.js";
import { withdrawalPages } from "./operator/withdrawals/index.js";
import { eventPages } from "./operator/events/index.js";
import { merchantPages } from "./operator/merchants/index.js";
import { merchantInvitePages } from "./operator/merchants/invite-user.js";
import { accountPages } from "./operator/accounts/index.js";
import { bankPages } from "./operator/banks/index.js";
import { moneyPages } from "./operator/money-pages.js";
import { peoplePages } from "./operator/people-pages.js";
import { servesMerchants, servesOperators } from "./config.js";
import { merchantRoutes } from "./merchant/index.js";
import { merchantNames, merchantSession } from "./middleware/merchant-session.js";
import { requireMerchantUser } from "./middleware/require-merchant-user.js";
import type { ConsoleRoute } from "./route.js";
import type { ConsoleState, RouteHandler } from "./state.js";

export interface CreateAppOptions {
  /** Pages and endpoints beyond the built-in ones (later areas, probes, tests); they get the same checks by `access`. */
  routes?: ConsoleRoute[];
}

/** The built-in areas; a new area adds its `pages/<area>/index.ts` factory here. */
function builtInRoutes(deps: ConsoleContext): ConsoleRoute[] {
  return [...signInPages(deps), ...setPasswordPages(deps), ...totpPages(deps), ...homePages(deps), ...transferPages(deps), ...statementPages(deps), ...approvalPages(deps), ...auditPages(deps), ...reconciliationPages(deps), ...depositPages(deps), ...withdrawalPages(deps), ...eventPages(deps), ...merchantInvitePages(deps), ...merchantPages(deps), ...accountPages(deps), ...bankPages(deps), ...moneyPages(deps), ...peoplePages(deps), ...cliRoutes(deps), ...stylesheetRoutes(), ...auditChainRoutes(deps), ...operatorRoutes(deps), ...merchantUserRoutes(deps), ...merchantRoutes(deps)];
}

/**
 * Which side of the console a route belongs to: the merchant dashboard (`merchant*` access), the
 * operators' (their pages, sign-in, the CLI's session API and the admin API: everything under
 * /api/), or both (probes). CONSOLE_AUDIENCE leaves out the side it does not serve: those paths
 * are 404 as if they never existed.
 */
function sideOf(route: ConsoleRoute): "merchants" | "operators" | "both" {
  if (route.access === "merchant" || route.access === "merchant-public") return "merchants";
  if (route.access === "api") return route.path.startsWith("/api/") ? "operators" : "both";
  return "operators";
}

/** On a merchants-only console, `/` is the dashboard's home. */
const MERCHANT_ROOT: ConsoleRoute = {
  method: "GET",
  path: "/",
  access: "merchant-public",
  handler: (ctx) => {
    ctx.status = 303;
    ctx.redirect("/merchant");
  },
};

/** The Koa app: every route, and the one place the order of middleware is set. */
export function createApp(deps: ConsoleContext, options: CreateAppOptions = {}): Koa<ConsoleState> {
  const operators = servesOperators(deps.config);
  const merchants = servesMerchants(deps.config);
  const routes = [...builtInRoutes(deps), ...(options.routes ?? []), ...(operators ? [] : [MERCHANT_ROOT])].filter((route) => {
    const side = sideOf(route);
    return side === "both" || (side === "operators" ? operators : merchants);
  });
  const session = browserSession(deps);
  const pageCsrf = sessionCsrf();
  const merchantCsrf = sessionCsrf({ merchant: true });
  const publicCsrf = preSessionCsrf({ secure: deps.secureCookies });
  const cli = cliAuth(deps);
  const admin = adminAuth(deps);
  const merchantUser = merchantSession(deps);
  const names = merchantNames(deps);
  const multipart = readMultipart({ limit: deps.config.CONSOLE_UPLOAD_LIMIT });
  const uploadPaths = new Set(routes.filter((r) => r.upload && r.method === "POST" && r.access === "operator").map((r) => r.path));

  /** The checks in front of a route's handler, by who may reach it (route.ts). */
  const chain = (route: ConsoleRoute): RouteHandler[] => {
    switch (route.access) {
      case "public":
        return [session, publicCsrf];
      case "operator":
      case "enrolling":
        return [session, requireOperator(deps, { enrolling: route.access === "enrolling", minRole: route.minRole }), ...(route.upload ? [multipart] : []), pageCsrf];
      case "api":
        return [];
      case "cli":
        return [cli];
      case "admin":
        return [admin];
      case "merchant-public":
        return [merchantUser, publicCsrf];
      case "merchant":
        return [merchantUser, requireMerchantUser(deps, { roles: route.merchantRoles, names }), merchantCsrf];
    }
  };

  const router = new Router<ConsoleState>({ sensitive: true });
  for (const route of routes) {
    const named: RouteHandler = async (ctx, next) => {
      ctx.state.route = route.path;
      await next();
    };
    router.register(route.path, [route.method], [named, ...chain(route), route.handler]);
  }

  const app = new Koa<ConsoleState>({ proxy: false });
  app.silent = true;
  app.on("error", (err: unknown) => deps.logger.warn({ err }, "response failed"));

  app.use(securityHeaders());
  app.use(accessLog({ logger: deps.logger, metrics: deps.metrics }));
  app.use(errorHandler({ logger: deps.logger }));
  app.use(metricsEndpoint({ metrics: deps.metrics, token: deps.config.METRICS_TOKEN }));
  app.use(clientIp({ trustedProxies: deps.config.TRUSTED_PROXIES }));
  app.use(language({ secure: deps.secureCookies }));
  app.use(modeMiddleware({ secure: deps.secureCookies }));
  app.use(readBody({ limit: deps.config.BODY_LIMIT, uploadPaths }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
