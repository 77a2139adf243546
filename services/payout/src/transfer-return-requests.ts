import { fromBinary } from "@bufbuild/protobuf";
import { TRANSFER_RETURN_REQUESTED_TOPIC } from "@payments/contracts";
import { TransferReturnRequestedSchema } from "@payments/contracts/deposit";
import { normalizeIban, type Subscription } from "@payments/kit";
import type { PayoutContext } from "./context.js";
import { createReturnAttempt, returnRequestProblem, type ReturnRequest } from "./transfer-returns.js";

/**
 * The deposit service asks for a return in the same transaction as the decision, through its
 * outbox (TransferReturnRequested); here each request becomes the attempt it names, once: a
 * repeated or racing delivery finds that attempt and changes nothing, so a sender is never
 * paid twice. A request that cannot be paid (an IBAN that is not Turkish, a currency not paid
 * out here) is recorded as a failed attempt with its TransferReturnChanged event, which puts
 * the transfer back in the operator's queue. Anything else throws, and the event comes again.
 */
export const TRANSFER_RETURN_REQUESTS_CONSUMER = "payout-transfer-return-requests";

export async function takeReturnRequest(ctx: PayoutContext, data: Uint8Array): Promise<void> {
  const event = fromBinary(TransferReturnRequestedSchema, data);
  const request: ReturnRequest = {
    transferId: event.transferId,
    // An event always names its attempt; 0 would mean "the next one", which a redelivery must never be.
    attempt: Math.max(1, event.attempt),
    iban: normalizeIban(event.iban),
    recipientName: event.recipientName,
    amount: Number(event.amount),
    currency: event.currency || "TRY",
    sandbox: event.sandbox,
    reason: event.reason || "returned to the sender",
    actor: event.actor || "deposit",
  };
  if (request.transferId === "") {
    ctx.logger.error({ eventId: event.eventId }, "transfer return request without a transfer id: ignored");
    return;
  }
  const problem = returnRequestProblem(ctx, request);
  if (problem) ctx.logger.warn({ transferId: request.transferId, attempt: request.attempt, problem: problem.error.message }, "transfer return request cannot be paid; recorded as failed");
  await createReturnAttempt(ctx, request, problem?.code);
}

export function startTransferReturnRequests(ctx: PayoutContext): Promise<Subscription> {
  return ctx.bus.consume(TRANSFER_RETURN_REQUESTS_CONSUMER, [TRANSFER_RETURN_REQUESTED_TOPIC], (message) => takeReturnRequest(ctx, message.data));
}
