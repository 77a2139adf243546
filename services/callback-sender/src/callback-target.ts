import { timestampMs } from "@bufbuild/protobuf/wkt";
import { MerchantCache, type BaseContext } from "@payments/kit";
import type { CallbackContext } from "./context.js";

/** A Standard Webhooks secret (`whsec_…`) and when it stops signing (epoch ms; null while current). */
export interface WebhookSecret {
  secret: string;
  expiresAt: number | null;
}

/** Where a merchant's callbacks go now and the secrets that sign them (GetCallbackTarget). */
export interface CallbackTarget {
  /** Empty when the merchant has set none. */
  callbackUrl: string;
  /** The current API secret: X-Signature. */
  signingSecret: string;
  /**
   * The webhook secrets that signed at lookup time, current first: webhook-signature. Their
   * ends are kept so a cached target stops signing with a rotated-out one on time (see
   * webhookSecretsAt). Empty for a merchant never shown one: no webhook-* headers.
   */
  webhookSecrets: WebhookSecret[];
}

/** The webhook secrets of a target that still sign at `now`, current first. */
export function webhookSecretsAt(target: Pick<CallbackTarget, "webhookSecrets">, now: number): string[] {
  return target.webhookSecrets.filter((s) => s.expiresAt === null || now < s.expiresAt).map((s) => s.secret);
}

/**
 * Callback targets by merchant id, dropped on MerchantChanged (a new URL, a rotated secret) or
 * after `ttlMs` (kit's MerchantCache); 0 turns it off. An attempt that is not delivered also
 * drops its merchant's target, so a retry always signs and sends with what the merchant
 * service says then.
 */
export function createCallbackTargetCache(base: Pick<BaseContext, "clock" | "logger">, ttlMs: number): MerchantCache<CallbackTarget> {
  return new MerchantCache<CallbackTarget>(base, ttlMs, "callback-targets");
}

/** The merchant's callback target, from the cache or the merchant service; failures are thrown and not kept. */
export function callbackTargetOf(ctx: CallbackContext, merchantId: string): Promise<CallbackTarget> {
  return ctx.callbackTargets.get(merchantId, async () => {
    const { callbackUrl, signingSecret, webhookSecrets } = await ctx.merchants.getCallbackTarget({ merchantId });
    return {
      callbackUrl,
      signingSecret,
      webhookSecrets: webhookSecrets.map((s) => ({ secret: s.secret, expiresAt: s.expiresAt ? Number(timestampMs(s.expiresAt)) : null })),
    };
  });
}

/** After an attempt that was not delivered: the merchant may be changing its endpoint, so the next attempt asks afresh. */
export function forgetCallbackTarget(ctx: CallbackContext, merchantId: string): void {
  ctx.callbackTargets.invalidate(merchantId);
}
