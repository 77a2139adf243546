import type { Command } from "commander";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  DeliveryStatus,
  GetEventResponseSchema,
  ListEventsResponseSchema,
  RedeliverEventResponseSchema,
  RedeliverFailedEventsResponseSchema,
  TransactionType,
  type CallbackEvent,
  type DeliveryAttempt,
} from "@payments/contracts/callback";
import { deliveryStatusFromProto } from "@payments/contracts/statuses";
import { DELIVERY_STATUS_NAMES, parseDeliveryStatus, parseIsoTime, parseRequiredText } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { formatTime, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";

/** ListEvents takes 1..100 per page; 0 means 20. */
export const EVENT_PAGE_MAX = 100;
/** How much of an attempt's error a list row shows; `events show` prints it whole. */
const LIST_ERROR_LENGTH = 60;

export function deliveryStatusLabel(status: DeliveryStatus): string {
  return deliveryStatusFromProto(status) ?? "unknown";
}

function transactionTypeLabel(type: TransactionType): string {
  switch (type) {
    case TransactionType.DEPOSIT:
      return "deposit";
    case TransactionType.WITHDRAWAL:
      return "withdrawal";
    default:
      return "transaction";
  }
}

/** An error is a merchant's trimmed response body: one line, and in a table cut to `max`. */
function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function answerLabel(attempt: DeliveryAttempt): string {
  return attempt.statusCode === 0 ? "no answer" : `HTTP ${attempt.statusCode}`;
}

/**
 * "failed (HTTP 500): receiver down", "delivered (HTTP 200)", "retry (no answer): no answer
 * within 10000 ms", or "—" before the first attempt. The status is in the parentheses, so an
 * error that repeats it ("HTTP 500: …") loses that prefix here.
 */
function lastAttemptLabel(event: CallbackEvent): string {
  const last = event.attempts.at(-1);
  if (!last) return "—";
  const label = `${last.outcome} (${answerLabel(last)})`;
  const error = last.statusCode !== 0 && last.error.startsWith(`HTTP ${last.statusCode}:`) ? last.error.slice(`HTTP ${last.statusCode}:`.length) : last.error;
  return error.trim() ? `${label}: ${oneLine(error, LIST_ERROR_LENGTH)}` : label;
}

/** Attempts are numbered across redeliveries and only the latest are kept, so the last number is the count. */
function attemptCount(event: CallbackEvent): number {
  return event.attempts.at(-1)?.number ?? 0;
}

/** When the next attempt is due; a pending event without one is being sent right now. */
function nextAttemptLabel(event: CallbackEvent): string {
  if (event.deliveryStatus !== DeliveryStatus.PENDING) return "—";
  return event.nextAttemptAt ? formatTime(event.nextAttemptAt) : "being sent now";
}

/** "pending, next attempt 2026-…Z", "pending, being sent now", "delivered". */
function stateLabel(event: CallbackEvent): string {
  const status = deliveryStatusLabel(event.deliveryStatus);
  if (event.deliveryStatus !== DeliveryStatus.PENDING) return status;
  return event.nextAttemptAt ? `${status}, next attempt ${formatTime(event.nextAttemptAt)}` : `${status}, being sent now`;
}

export function printEvent(out: Output, event: CallbackEvent): void {
  const fields: Array<[string, string]> = [
    ["id", event.id],
    ["merchant", event.merchantId],
    ["type", event.type],
    ["transaction", `${event.transactionId} (${transactionTypeLabel(event.transactionType)}, sequence ${event.sequence})`],
    ["delivery status", deliveryStatusLabel(event.deliveryStatus)],
    ["status changed", formatTime(event.createdAt)],
  ];
  if (event.deliveryStatus === DeliveryStatus.PENDING) fields.push(["next attempt", nextAttemptLabel(event)]);
  if (event.deliveredAt) fields.push(["delivered", formatTime(event.deliveredAt)]);
  fields.push(["attempts", String(attemptCount(event))]);
  out.fields(fields);

  if (event.attempts.length === 0) return;
  const count = attemptCount(event);
  out.line();
  out.line(event.attempts.length < count ? `Attempts (the latest ${event.attempts.length} of ${count}):` : "Attempts:");
  out.table(
    ["#", "TIME", "URL", "STATUS", "LATENCY", "OUTCOME", "ERROR"],
    event.attempts.map((a) => [
      String(a.number),
      formatTime(a.attemptedAt),
      a.url || "(no callback URL)",
      answerLabel(a),
      `${a.latencyMs} ms`,
      a.outcome,
      a.error ? oneLine(a.error) : "—",
    ]),
  );
}

/** The event in a response, which a well-behaved service always sets. */
function requiredEvent(event: CallbackEvent | undefined): CallbackEvent {
  if (!event) throw new Error("the service returned no event");
  return event;
}

export function registerEventCommands(program: Command, ctx: CommandContext): void {
  const events = program
    .command("events")
    .description("merchants' callback events (one per deposit or withdrawal status change) and every delivery attempt; ask for redelivery");

  pagingOptions(
    events
      .command("list")
      .description("list a merchant's callback events, newest first (by the time of the status change), a page at a time or --all")
      .requiredOption("--merchant <id>", "the merchant", parseRequiredText)
      .option("--status <status>", `only events in this delivery status: ${DELIVERY_STATUS_NAMES.join("|")}`, parseDeliveryStatus)
      .option("--transaction <id>", "only the events of this deposit or withdrawal"),
    EVENT_PAGE_MAX,
    20,
  )
    .addHelpText(
      "after",
      `
Delivery statuses: pending (being sent or waiting for a retry), delivered (a 2xx arrived),
failed (every attempt of the retry schedule failed; only a redelivery sends it again).${pagingHelp("events")}`,
    )
    .action(async (opts: { merchant: string; status?: DeliveryStatus; transaction?: string } & PagingOptions, cmd: Command) => {
      const { out, callbacks } = ctx.session(cmd);
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await callbacks.listEvents({
            merchantId: opts.merchant,
            deliveryStatus: opts.status ?? DeliveryStatus.UNSPECIFIED,
            transactionId: opts.transaction?.trim() ?? "",
            limit,
            cursor,
          });
          return { items: res.events, nextCursor: res.nextCursor };
        },
        json: (events, nextCursor) => out.message(ListEventsResponseSchema, create(ListEventsResponseSchema, { events: [...events], nextCursor })),
        headers: ["ID", "CREATED", "TYPE", "TRANSACTION", "DELIVERY", "ATTEMPTS", "LAST ATTEMPT", "NEXT ATTEMPT"],
        row: (e) => [
          e.id,
          formatTime(e.createdAt),
          e.type,
          e.transactionId,
          deliveryStatusLabel(e.deliveryStatus),
          String(attemptCount(e)),
          lastAttemptLabel(e),
          nextAttemptLabel(e),
        ],
        empty: "No events.",
        more: "More events",
        max: EVENT_PAGE_MAX,
      });
    });

  events
    .command("show")
    .description("show one callback event of any merchant with every delivery attempt: time, URL, status code, latency, error, outcome")
    .argument("<event-id>", "the event's id (the X-Event-Id the merchant receives)")
    .addHelpText(
      "after",
      `
Outcomes: delivered, retry (another attempt was scheduled), failed (the schedule was over),
lost (the sender stopped before it recorded the answer; the event was sent again).
With --json, prints {"event":{…}}, including bodyJson: the exact body every attempt sends.`,
    )
    .action(async (id: string, _opts: object, cmd: Command) => {
      const { out, callbacks } = ctx.session(cmd);
      // No merchant id: operators see every merchant's events.
      const res = await callbacks.getEvent({ merchantId: "", allMerchants: true, eventId: id });
      if (out.json) return out.message(GetEventResponseSchema, res);
      printEvent(out, requiredEvent(res.event));
    });

  events
    .command("redeliver")
    .description("ask for a new delivery of one event of any merchant, whatever its delivery status")
    .argument("<event-id>", "the event's id")
    .addHelpText(
      "after",
      `
A delivered or failed event becomes pending with a fresh round of the retry schedule; a
pending one waiting for a retry is sent now; one being sent right now is left to that attempt.
The callback goes to the merchant's callback URL as it is now. Prints the event's new state;
with --json, {"event":{…}}.`,
    )
    .action(async (id: string, _opts: object, cmd: Command) => {
      const { out, callbacks } = ctx.session(cmd);
      // No merchant id: operators may redeliver any merchant's events.
      const res = await callbacks.redeliverEvent({ merchantId: "", allMerchants: true, eventId: id });
      if (out.json) return out.message(RedeliverEventResponseSchema, res);
      const event = requiredEvent(res.event);
      out.line(`Redelivery of event ${event.id} requested: ${stateLabel(event)}.`);
      printEvent(out, event);
    });

  events
    .command("redeliver-failed")
    .description("redeliver every failed event of a merchant whose status change happened at or after --since")
    .requiredOption("--merchant <id>", "the merchant", parseRequiredText)
    .requiredOption("--since <time>", "ISO 8601 time with its zone, e.g. 2026-11-22T10:00:00Z or 2026-11-22T13:00:00+03:00 (a date alone is midnight UTC)", parseIsoTime)
    .addHelpText(
      "after",
      `
Each failed event becomes pending with a fresh round of the retry schedule; pending and
delivered events are left alone. Prints how many and their ids (oldest first); with --json,
{"count":N,"eventIds":[…]}.`,
    )
    .action(async (opts: { merchant: string; since: Date }, cmd: Command) => {
      const { out, callbacks } = ctx.session(cmd);
      const res = await callbacks.redeliverFailedEvents({ merchantId: opts.merchant, since: timestampFromDate(opts.since) });
      if (out.json) return out.message(RedeliverFailedEventsResponseSchema, res);
      const since = opts.since.toISOString();
      if (res.count === 0) return out.line(`No failed events of merchant ${opts.merchant} since ${since}: nothing to redeliver.`);
      out.line(`Redelivering ${res.count} failed event${res.count === 1 ? "" : "s"} of merchant ${opts.merchant} since ${since}:`);
      for (const eventId of res.eventIds) out.line(`  ${eventId}`);
    });
}
