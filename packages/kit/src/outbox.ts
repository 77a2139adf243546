import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { Knex } from "knex";
import type { Clock } from "./clock.js";
import { hotQuery } from "./db.js";
import { newId } from "./ids.js";
import { currentRequestId } from "./logger.js";
import { currentTraceparent } from "./tracing.js";

export * from "./outbox-migrations.js";
export * from "./outbox-relay.js";

/** The outbox's columns, in the order recordEvent and recordEvents write them. */
const COLUMNS = "(`event_id`, `topic`, `payload`, `created_at`, `traceparent`, `request_id`)";
const ROW = "(?, ?, ?, ?, ?, ?)";

/** An event to record: its topic, message schema and fields (`eventId` in them, or one is made). */
export interface OutboxEvent<Desc extends DescMessage = DescMessage> {
  topic: string;
  schema: Desc;
  init: MessageInitShape<Desc>;
}

/** One outbox row's values, in COLUMNS order, and its event id: the payload is the message with its event id. */
function outboxRow<Desc extends DescMessage>(event: OutboxEvent<Desc>, createdAt: number, traceparent: string | null, requestId: string | null): { eventId: string; values: unknown[] } {
  const given = (event.init as { eventId?: unknown }).eventId;
  const eventId = typeof given === "string" && given !== "" ? given : newId("evt");
  const message = create(event.schema, { ...(event.init as object), eventId } as unknown as MessageInitShape<Desc>);
  return { eventId, values: [eventId, event.topic, Buffer.from(toBinary(event.schema, message)), createdAt, traceparent, requestId] };
}

/**
 * Writes an event in the caller's transaction, so it exists exactly when the change does.
 * The event id is generated unless init sets `eventId`; it becomes the Nats-Msg-Id. Every state
 * move writes one, so it goes straight to the transaction's connection (hotQuery, issue 22).
 */
export async function recordEvent<Desc extends DescMessage>(
  trx: Knex.Transaction | Knex,
  clock: Clock,
  topic: string,
  schema: Desc,
  init: MessageInitShape<Desc>,
): Promise<string> {
  const [eventId] = await recordEvents(trx, clock, [{ topic, schema, init }]);
  return eventId!;
}

/** recordEvent for several events of one transaction, in one statement and in their order; their event ids. */
export async function recordEvents(trx: Knex.Transaction | Knex, clock: Clock, events: ReadonlyArray<OutboxEvent>): Promise<string[]> {
  if (events.length === 0) return [];
  const createdAt = clock.now().getTime();
  const traceparent = currentTraceparent() ?? null;
  const requestId = currentRequestId() ?? null;
  const rows = events.map((event) => outboxRow(event, createdAt, traceparent, requestId));
  await hotQuery(
    trx,
    `INSERT INTO \`outbox\` ${COLUMNS} VALUES ${rows.map(() => ROW).join(", ")}`,
    rows.flatMap((row) => row.values),
  );
  return rows.map((row) => row.eventId);
}
