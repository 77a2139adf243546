import type { z } from "zod";
import { ConsoleError } from "../errors.js";
import type { ConsoleRoute, RouteAccess } from "../route.js";
import type { ConsoleContextKoa, RouteHandler } from "../state.js";

/**
 * The request's JSON body as `schema` says, or 400 naming the first problem. JSON only: a
 * cross-site form cannot send application/json without the browser asking first, so the
 * unauthenticated sign-in endpoint is not reachable by another site's form either.
 */
export function jsonBody<S extends z.ZodType>(ctx: ConsoleContextKoa, schema: S): z.infer<S> {
  if (ctx.state.form !== undefined) throw new ConsoleError(415, "UNSUPPORTED_MEDIA_TYPE", "send application/json");
  const parsed = schema.safeParse(ctx.state.json ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConsoleError(400, "VALIDATION_ERROR", issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "invalid body");
  }
  return parsed.data;
}

/** A route of the JSON API: its method, path, who may reach it (`api`, `cli`, `admin`) and its handler. */
export function apiRoute(method: ConsoleRoute["method"], path: string, access: RouteAccess, handler: RouteHandler): ConsoleRoute {
  return { method, path, access, handler };
}
