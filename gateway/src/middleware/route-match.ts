import type Router from "@koa/router";
import { ApiError } from "../errors.js";
import type { GatewayMiddleware, GatewayState } from "../state.js";

const ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
const methodOrder = (method: string) => (ORDER.includes(method) ? ORDER.indexOf(method) : ORDER.length);

/**
 * Settles the route before any body is read or credential checked: an unknown path is 404,
 * a known path with another method is 405 with the methods it does accept in Allow.
 */
export function routeMatch(options: { router: Router<GatewayState> }): GatewayMiddleware {
  return async (ctx, next) => {
    const matched = options.router.match(ctx.path, ctx.method);
    const layer = matched.pathAndMethod.find((l) => l.methods.length > 0);
    if (layer) {
      ctx.state.route = layer.path.toString();
      await next();
      return;
    }
    const allowed = [...new Set(matched.path.flatMap((l) => l.methods))].sort((a, b) => methodOrder(a) - methodOrder(b));
    if (allowed.length === 0) {
      throw new ApiError(404, "NOT_FOUND", `No endpoint at ${ctx.path.slice(0, 200)}`);
    }
    throw new ApiError(405, "METHOD_NOT_ALLOWED", `${ctx.method} is not allowed here; use ${allowed.join(" or ")}`, undefined, { Allow: allowed.join(", ") });
  };
}
