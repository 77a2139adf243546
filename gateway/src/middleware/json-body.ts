import { ApiError } from "../errors.js";
import { jsonDepth, MAX_JSON_DEPTH } from "../json-depth.js";
import type { GatewayMiddleware } from "../state.js";

const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A POST body must be a JSON object sent as application/json (UTF-8). Parsed from the
 * same bytes the signature covered. With `optional`, for routes that take no body (a
 * cancel), an empty body is accepted as `{}` whatever its Content-Type; a non-empty one
 * still has to be a JSON object. No field may nest objects and arrays more than
 * MAX_JSON_DEPTH levels deep: it is named in the 400, and no route ever has to serialise it.
 */
export function jsonBody(options: { optional?: boolean } = {}): GatewayMiddleware {
  return async (ctx, next) => {
    if (!WITH_BODY.has(ctx.method)) {
      await next();
      return;
    }
    if (options.optional && (ctx.state.rawBody?.length ?? 0) === 0) {
      ctx.state.body = {};
    } else {
      const [type = "", ...params] = ctx.get("Content-Type").split(";");
      const charset = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith("charset="));
      if (type.trim().toLowerCase() !== "application/json" || (charset && !["charset=utf-8", 'charset="utf-8"'].includes(charset))) {
        throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "The request body must be sent as Content-Type: application/json (UTF-8)");
      }
      let value: unknown;
      try {
        value = JSON.parse(utf8.decode(ctx.state.rawBody ?? new Uint8Array()));
      } catch {
        throw new ApiError(400, "VALIDATION_ERROR", "body: is not valid JSON");
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new ApiError(400, "VALIDATION_ERROR", "body: must be a JSON object");
      }
      for (const [field, fieldValue] of Object.entries(value)) {
        if (jsonDepth(fieldValue, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
          // The name is the client's own text: cut, so a 60 KiB key does not come back whole.
          throw new ApiError(400, "VALIDATION_ERROR", `${field.slice(0, 100)}: is nested too deeply (at most ${MAX_JSON_DEPTH} levels of objects and arrays)`);
        }
      }
      ctx.state.body = value as Record<string, unknown>;
    }
    await next();
  };
}
