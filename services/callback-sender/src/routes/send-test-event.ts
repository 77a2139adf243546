import { Code } from "@connectrpc/connect";
import type { CallbackService } from "@payments/contracts/callback";
import { errorInfo, newId, parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { callbackTargetOf, forgetCallbackTarget, webhookSecretsAt } from "../callback-target.js";
import type { CallbackContext } from "../context.js";
import { merchantId } from "../requests.js";
import { callbackHeaders } from "../sender.js";

const request = z.object({ merchantId });

/** The X-Event-Type of a test event; never one of a transaction's. */
export const TEST_EVENT_TYPE = "test";
/** How much of the receiver's answer is handed back. */
export const TEST_RESPONSE_LIMIT = 2048;

/**
 * A test event's body: the shape of every callback (`id`, `type`, `createdAt`, `data` with
 * transactionId, status and sequence), so a receiver's verifier (@payments/signing's
 * verifyCallback) takes it as it takes real ones, and `data` saying plainly it is a test.
 * transactionId is the event's own id: no transaction has it, and two tests never look
 * like one transaction's stale repeat.
 */
export function testEventBody(eventId: string, merchant: string, at: Date): string {
  return JSON.stringify({
    id: eventId,
    type: TEST_EVENT_TYPE,
    createdAt: at.toISOString(),
    data: {
      test: true,
      message: "This is a test event sent from the payments dashboard; no money moved.",
      merchantId: merchant,
      transactionId: eventId,
      status: TEST_EVENT_TYPE,
      sequence: 0,
    },
  });
}

/**
 * POSTs a test event to the merchant's callback URL now and answers with what came back.
 * It goes out as a real attempt does (sender.ts): the target the merchant service gives now
 * (the cached one is dropped first, so a URL set a moment ago is used), the same headers and
 * signatures, the same poster (address policy, no redirects, CALLBACK_TIMEOUT). Nothing is
 * stored and nothing is retried; the receiver's failure is an answer, not an error.
 */
export function sendTestEvent(ctx: CallbackContext): Rpc<typeof CallbackService, "sendTestEvent"> {
  return {
    async sendTestEvent(req) {
      const input = parseRequest(request, req);
      forgetCallbackTarget(ctx, input.merchantId);
      const target = await callbackTargetOf(ctx, input.merchantId).catch((err: unknown) => {
        if (errorInfo(err).code !== Code.NotFound) throw err;
        throw serviceError(Code.NotFound, "MERCHANT_NOT_FOUND", `merchant ${JSON.stringify(input.merchantId)} does not exist`);
      });
      if (target.callbackUrl === "") {
        throw serviceError(Code.FailedPrecondition, "NO_CALLBACK_URL", "the merchant has no callback URL set: set one, then send a test event");
      }
      const eventId = newId("evt_test");
      const answer = { eventId, url: target.callbackUrl, delivered: false, statusCode: 0, responseBody: "", durationMs: 0n, error: "" };
      if (!URL.canParse(target.callbackUrl)) return { ...answer, error: "the merchant's callback URL is not a URL" };
      const url = new URL(target.callbackUrl);
      const now = ctx.clock.now();
      const body = testEventBody(eventId, input.merchantId, now);
      const headers = callbackHeaders(target.signingSecret, url, { eventId, type: TEST_EVENT_TYPE, body }, now, webhookSecretsAt(target, now.getTime()));
      const result = await ctx.poster.post({ url: url.toString(), headers, body, keepBody: TEST_RESPONSE_LIMIT });
      ctx.logger.info({ merchantId: input.merchantId, eventId, delivered: result.delivered, statusCode: result.statusCode }, "test event sent");
      return {
        ...answer,
        url: url.toString(),
        delivered: result.delivered,
        statusCode: result.statusCode,
        responseBody: result.body ?? "",
        durationMs: BigInt(result.latencyMs),
        error: result.error,
      };
    },
  };
}
