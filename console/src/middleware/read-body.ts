import { ConsoleError } from "../errors.js";
import type { ConsoleMiddleware } from "../state.js";

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);

async function readAll(ctx: Parameters<ConsoleMiddleware>[0], limit: number): Promise<Buffer> {
  const declared = Number(ctx.get("content-length") || 0);
  if (declared > limit) throw new ConsoleError(413, "BODY_TOO_LARGE", `the body is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new ConsoleError(413, "BODY_TOO_LARGE", `the body is larger than ${limit} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * The body of a state-changing request, read once, up to BODY_LIMIT: a form
 * (application/x-www-form-urlencoded, fields into state.form) or JSON (state.json). Anything
 * else with a body is refused (415), except multipart/form-data on an upload route (`uploadPaths`),
 * which read-multipart reads later.
 */
export function readBody(options: { limit: number; uploadPaths?: ReadonlySet<string> }): ConsoleMiddleware {
  return async (ctx, next) => {
    if (!METHODS_WITH_BODY.has(ctx.method)) {
      await next();
      return;
    }
    // An upload route's multipart body is left unread here: read-multipart reads it, after the session is checked.
    if (ctx.method === "POST" && options.uploadPaths?.has(ctx.path) && /^multipart\/form-data\s*;/i.test(ctx.get("content-type"))) {
      await next();
      return;
    }
    const raw = await readAll(ctx, options.limit);
    const type = ctx.get("content-type").split(";")[0]?.trim().toLowerCase() ?? "";
    if (type === "application/x-www-form-urlencoded") {
      ctx.state.form = Object.fromEntries(new URLSearchParams(raw.toString("utf8")));
    } else if (type === "application/json") {
      try {
        ctx.state.json = raw.length === 0 ? undefined : (JSON.parse(raw.toString("utf8")) as unknown);
      } catch {
        throw new ConsoleError(400, "INVALID_JSON", "the body is not valid JSON");
      }
    } else if (raw.length > 0) {
      throw new ConsoleError(415, "UNSUPPORTED_MEDIA_TYPE", "send a form or application/json");
    }
    await next();
  };
}
