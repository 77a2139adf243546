import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { Knex } from "knex";
import type { Clock } from "./clock.js";
import { hotQuery } from "./db.js";
import { newId } from "./ids.js";
import { currentRequestId } from "./logger.js";
import { currentTraceparent } from "./tracing.js";

export * from "./outbox-migrations.js";
export * from "./outbox-relay.js";

/** recordEvent's statement: every state move writes one (hotQuery, issue 22). */
const INSERT_EVENT = "INSERT INTO `outbox` (`event_id`, `topic`, `payload`, `created_at`, `traceparent`, `request_id`) VALUES (?, ?, ?, ?, ?, ?)";

/**
 * Writes an event in the caller's transaction, so it exists exactly when the change does.
 * The event id is generated unless init sets `eventId`; it becomes the Nats-Msg-Id.
 */
export async function recordEvent<Desc extends DescMessage>(
  trx: Knex.Transaction | Knex,
  clock: Clock,
  topic: string,
  schema: Desc,
  init: MessageInitShape<Desc>,
): Promise<string> {
  const given = (init as { eventId?: unknown }).eventId;
  const eventId = typeof given === "string" && given !== "" ? given : newId("evt");
  const message = create(schema, { ...(init as object), eventId } as unknown as MessageInitShape<Desc>);
  await hotQuery(trx, INSERT_EVENT, [eventId, topic, Buffer.from(toBinary(schema, message)), clock.now().getTime(), currentTraceparent() ?? null, currentRequestId() ?? null]);
  return eventId;
}
