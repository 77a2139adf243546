import { callbackUrlRefusal, validationError } from "@payments/kit";
import type { MerchantContext } from "./context.js";

/**
 * Refuses, when it is set, a callback URL the callback-sender would refuse to call: a
 * private, loopback or link-local address, or a name resolving to one, unless
 * CALLBACK_ALLOW_PRIVATE is on. The merchant hears it now instead of through failed
 * deliveries; the sender still checks every connection.
 */
export async function requireCallableCallbackUrl(ctx: MerchantContext, callbackUrl: string | null): Promise<void> {
  if (callbackUrl === null) return;
  const refusal = await callbackUrlRefusal(new URL(callbackUrl), ctx.config.CALLBACK_ALLOW_PRIVATE);
  if (refusal) throw validationError("callback_url", `callback_url: ${refusal}`);
}
