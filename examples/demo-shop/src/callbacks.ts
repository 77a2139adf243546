import type { Context } from "koa";
import { verifyCallback } from "@payments/sdk";
import type { OrderStore } from "./orders.js";

/**
 * POST /payments/callback: the gateway's signed status callbacks. Anyone can POST here, so
 * nothing is believed before the signature checks out against the merchant's API secret
 * over the exact bytes received; a refused callback is answered 401 and logged, and changes
 * nothing. A verified one is applied once and in order (OrderStore.applyDepositUpdate) and
 * answered 2xx, which is what stops the gateway's retries.
 */
export function callbackHandler(deps: { store: OrderStore; secret: () => string; signedPath: () => string; log?: (line: string) => void }) {
  const log = deps.log ?? ((line: string) => console.log(line));
  return async (ctx: Context): Promise<void> => {
    const body = await rawBody(ctx);
    const result = verifyCallback({
      secrets: deps.secret(),
      headers: ctx.req.headers,
      body,
      // The path the gateway signed is the registered callback URL's, whatever a proxy in
      // front of the shop (DEMO_PUBLIC_URL) did to it on the way.
      path: deps.signedPath(),
    });
    if (!result.ok) {
      log(`callback refused from ${ctx.ip}: ${result.reason}: ${result.message}`);
      ctx.status = 401;
      ctx.body = { error: result.reason };
      return;
    }
    const { event } = result;
    if (!event.type.startsWith("deposit.")) {
      // This shop never pays out; acknowledged so that it is not retried.
      log(`callback ${event.id} (${event.type}) ignored: the shop creates no withdrawals`);
      ctx.status = 204;
      return;
    }
    const { outcome, order } = deps.store.applyDepositUpdate({
      eventId: event.id,
      processId: typeof event.data.processId === "string" ? event.data.processId : undefined,
      transactionId: event.data.transactionId,
      status: event.data.status,
      sequence: event.data.sequence,
    });
    log(`callback ${event.id} ${event.type} seq ${event.data.sequence}: ${outcome}${order ? ` (order ${order.id} is ${order.status})` : ""}`);
    ctx.status = 204;
  };
}

const MAX_BODY = 1024 * 1024;

/** The body exactly as received: a parsed and re-serialised body would not match the signature. */
async function rawBody(ctx: Context): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) ctx.throw(413, "callback body too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
