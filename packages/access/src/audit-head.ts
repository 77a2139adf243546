import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { auditHeadTopic } from "@payments/contracts";
import { AuditHeadSchema } from "@payments/contracts/operator";
import type { Knex } from "knex";
import { z } from "zod";
import { type Clock, envVar, type EventBus, type Logger, type Metrics, startJob, type Stoppable } from "@payments/kit";
import { readAuditHead } from "./audit-read.js";

/** AUDIT_HEAD_INTERVAL: how often each service publishes its audit's head (README, "Operators, roles and approvals"). */
export const auditHeadConfigSchema = z.object({
  AUDIT_HEAD_INTERVAL: envVar.duration("60s"),
});

export interface AuditHeadOptions {
  /** The service whose audit it is (its module's name, or `console`). */
  service: string;
  db: Knex;
  /** Where the head goes beside the log line; without one (a process with no bus), the log line alone. */
  bus?: EventBus;
  clock: Clock;
  logger: Logger;
  metrics?: Metrics;
  /** The pause between two publications (AUDIT_HEAD_INTERVAL). */
  intervalMs: number;
}

/**
 * Publishes the audit's head once: an info log line ("audit head", with service, seq, hash and
 * at) and an AuditHead on `operator.v1.audit_head.<service>`. One read of a one-row table: cheap
 * when nothing happens. The log line is written first, so a bus that is away loses nothing of it.
 */
export async function publishAuditHead(options: Omit<AuditHeadOptions, "intervalMs">): Promise<{ seq: number; hash: string }> {
  const { service, db, bus, clock, logger } = options;
  const head = await readAuditHead(db);
  const at = clock.now().getTime();
  logger.info({ auditHead: { service, seq: head.seq, hash: head.hash, at: new Date(at).toISOString() } }, `audit head of ${service}: ${head.seq}:${head.hash}`);
  if (bus) {
    const message = create(AuditHeadSchema, { service, seq: BigInt(head.seq), hash: head.hash, at: timestampFromMs(at) });
    await bus.publish(auditHeadTopic(service), toBinary(AuditHeadSchema, message), `audit-head:${service}:${head.seq}:${at}`);
  }
  return head;
}

/**
 * The job that publishes a service's audit head at start and then every `intervalMs`, so that a
 * tail cut off the chain (and its head row set back) is still told by the last head published.
 * A failed pass (the bus away, the database restarting) is warned once and tried again next time.
 */
export function startAuditHeadPublisher(options: AuditHeadOptions): Stoppable {
  const job = startJob({
    name: "audit-head",
    intervalMs: options.intervalMs,
    runAtStart: true,
    logger: options.logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    failureMessage: `could not publish the audit head of ${options.service}; trying again in ${options.intervalMs} ms`,
    run: async () => {
      await publishAuditHead(options);
    },
  });
  return { stop: () => job.stop() };
}
