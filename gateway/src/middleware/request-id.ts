import { isValidRequestId, newId, withRequestId } from "@payments/kit";
import type { GatewayMiddleware } from "../state.js";

/**
 * Echoes a well-formed incoming X-Request-Id or makes one, sets it on the response before
 * anything else can fail, and runs the rest of the request inside it so every log line and
 * outgoing RPC carries it.
 */
export function requestId(options: { header?: string } = {}): GatewayMiddleware {
  const header = options.header ?? "X-Request-Id";
  return async (ctx, next) => {
    const incoming = ctx.get(header);
    const id = isValidRequestId(incoming) ? incoming : newId("req");
    ctx.state.requestId = id;
    ctx.set(header, id);
    await withRequestId(id, () => next());
  };
}
