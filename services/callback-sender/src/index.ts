import { CallbackService } from "@payments/contracts/callback";
import { MerchantService } from "@payments/contracts/merchant";
import type { BaseContext, ServiceModule, Stoppable } from "@payments/kit";
import { migrations } from "./migrations/index.js";
import { createCallbackTargetCache } from "./callback-target.js";
import { loadCallbackConfig, type CallbackContext } from "./context.js";
import { startIngest } from "./ingest.js";
import { createCallbackPoster, type CallbackPoster } from "./post-callback.js";
import { routes } from "./routes/index.js";
import { startCallbackSender, type CallbackSender } from "./sender.js";
import { callbackAccess } from "./access.js";

export interface CallbackModuleOptions {
  /** How callbacks are POSTed; default undici with the address policy (CALLBACK_ALLOW_PRIVATE) and CALLBACK_TIMEOUT. */
  poster?: CallbackPoster;
}

/** The callback-sender: status changes in, signed callbacks out, with retries, a log of every attempt and redelivery. */
export function createCallbackModule(options: CallbackModuleOptions = {}): ServiceModule<CallbackContext> {
  return {
    name: "callback-sender",
    services: [CallbackService],
    migrations,
    // Every transaction here (ingest, claim, record) wants READ COMMITTED: no SET TRANSACTION each.
    readCommitted: true,
    createContext(base: BaseContext): CallbackContext {
      const config = loadCallbackConfig(base.env);
      return {
        ...base,
        config,
        merchants: base.client(MerchantService, "merchant"),
        callbackTargets: createCallbackTargetCache(base, config.MERCHANT_CACHE_TTL),
        poster: options.poster ?? createCallbackPoster({ timeoutMs: config.CALLBACK_TIMEOUT, allowPrivate: config.CALLBACK_ALLOW_PRIVATE }),
        wakeSender: () => {},
      };
    },
    routes,
    access: callbackAccess,
    async start(ctx) {
      const jobs: Stoppable[] = [];
      let sender: CallbackSender | undefined;
      if (ctx.config.CALLBACK_SENDER) {
        // Watching before the first attempt: no change can slip between a lookup and the watch.
        jobs.push(await ctx.callbackTargets.watchMerchantChanges(ctx.bus));
        sender = startCallbackSender(ctx);
        ctx.wakeSender = sender.wake;
        jobs.push(sender);
      }
      // Stopped before the sender (jobs stop in reverse): the last batch it takes in is sent.
      jobs.push(...(await startIngest(ctx, sender, (transactionIds) => sender?.wake(transactionIds))));
      // Stopped last (jobs stop in reverse): no connection is closed under an attempt.
      jobs.unshift({ stop: () => ctx.poster.close() });
      return jobs;
    },
  };
}

export const callbackModule = createCallbackModule();

export { callbackEventOf, CONSUMED_TOPICS, EVENT_TYPES, isCallbackTopic, type CallbackBody, type EventType, type NewCallbackEvent } from "./callback-event.js";
export { AddressRefused, guardedLookup, isAllowedAddress } from "@payments/kit";
export { callbackConfigSchema, loadCallbackConfig, type CallbackConfig, type CallbackContext } from "./context.js";
export { createCallbackPoster, type CallbackPoster, type PostRequest, type PostResult } from "./post-callback.js";
export { nextStep, parseRetryAfter } from "./retry-schedule.js";
export { claimDueAttempts, claimableAtIngest, createAttemptRecorder, deliverAttempt, recordAttempts, startCallbackSender, type ClaimedAttempt } from "./sender.js";
export { migrations } from "./migrations/index.js";
