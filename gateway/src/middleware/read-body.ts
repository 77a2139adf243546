import getRawBody from "raw-body";
import { ApiError } from "../errors.js";
import type { GatewayMiddleware } from "../state.js";

function isRawBodyError(err: unknown): err is Error & { type: string; status?: number } {
  return err instanceof Error && typeof (err as { type?: unknown }).type === "string";
}

/**
 * Reads the exact request bytes (the signature covers them, not re-serialised JSON), up to
 * the limit. Over it: 413, and the connection is closed rather than drained. A body that
 * cannot be read to its end is a 400.
 */
export function readBody(options: { limit: number }): GatewayMiddleware {
  return async (ctx, next) => {
    const encoding = ctx.get("Content-Encoding").trim().toLowerCase();
    if (encoding !== "" && encoding !== "identity") {
      throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Compressed request bodies are not accepted; send the body without Content-Encoding");
    }
    const length = ctx.get("Content-Length");
    try {
      ctx.state.rawBody = await getRawBody(ctx.req, { limit: options.limit, length: length === "" ? undefined : length });
    } catch (err) {
      if (isRawBodyError(err) && err.type === "entity.too.large") {
        throw new ApiError(413, "PAYLOAD_TOO_LARGE", `The request body is larger than ${options.limit} bytes`, undefined, { Connection: "close" });
      }
      // Anything else is the request stream failing under us: the client aborted, or sent
      // bytes Node's parser refused. That is the client's doing, not a 500, and the error is
      // not logged: a parser error carries the raw request bytes, credentials included.
      throw new ApiError(400, "VALIDATION_ERROR", "body: the request body could not be read completely", undefined, { Connection: "close" });
    }
    await next();
  };
}
