import { OUTBOX_LEASE_MS } from "@payments/kit";
import { COMPONENTS, REPLICAS, RUN_SETTINGS, type Component, type Deployment } from "./deployment.js";
import { sleep } from "./processes.js";
import type { MerchantReceiver } from "./receiver.js";
import type { Random } from "./rng.js";

export const FAULT_KINDS = ["kill9", "pause", "restartNats", "restartMariadb", "receiverSlow", "receiverError", "receiverDown"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One fault of the schedule: what, to whom, when (ms after the load starts) and for how long. */
export interface PlannedFault {
  kind: FaultKind;
  atMs: number;
  forMs: number;
  /** kill9 and pause: the component and replica. */
  target?: { component: Component; replica: number };
  /** receiverSlow: how long each answer takes. */
  slowMs?: number;
}

/** A fault as it happened (Date.now() times). */
export interface FaultRecord extends PlannedFault {
  start: number;
  end?: number;
  /** Why it did not happen (its target was already down or paused). */
  skipped?: string;
  /** What went wrong healing it (a replica that did not come back in time): the run goes on. */
  error?: string;
}

/** Components a pause hurts most: the ones holding leases (relays, the payout worker, callback claims). */
const PAUSABLE: readonly Component[] = ["deposit", "payout", "callback-sender", "merchant"];

/**
 * The schedule a seed gives: from 5 s after the load starts until 15 s before it stops, a
 * fault starts every 4–15 s, the kinds in a shuffled cycle so each comes up in turn; faults
 * overlap. A pause lasts past every lease (the payout resend, the callback claim, the outbox
 * lease), so another replica takes the work over while the paused one still holds it.
 */
export function planFaults(random: Random, durationMs: number): PlannedFault[] {
  const plan: PlannedFault[] = [];
  let at = 5_000;
  let cycle: FaultKind[] = [];
  const pauseMs = Math.max(RUN_SETTINGS.resendAfterMs, RUN_SETTINGS.callbackClaimMs, OUTBOX_LEASE_MS) + 2_000;
  while (at < durationMs - 15_000) {
    if (cycle.length === 0) cycle = random.shuffle(FAULT_KINDS);
    const kind = cycle.shift()!;
    const fault: PlannedFault = { kind, atMs: at, forMs: 0 };
    switch (kind) {
      case "kill9":
        fault.target = { component: random.pick(COMPONENTS), replica: random.int(0, REPLICAS - 1) };
        fault.forMs = random.int(1_000, 8_000);
        break;
      case "pause":
        fault.target = { component: random.pick(PAUSABLE), replica: random.int(0, REPLICAS - 1) };
        fault.forMs = pauseMs + random.int(0, 4_000);
        break;
      case "restartNats":
      case "restartMariadb":
        fault.forMs = random.int(2_000, 10_000);
        break;
      case "receiverSlow":
        fault.forMs = random.int(8_000, 25_000);
        fault.slowMs = random.int(500, 4_000);
        break;
      case "receiverError":
      case "receiverDown":
        fault.forMs = random.int(5_000, 20_000);
        break;
    }
    plan.push(fault);
    at += random.int(4_000, 15_000);
  }
  return plan;
}

/** Runs the plan against the deployment; resolves when every fault has healed. */
export class FaultInjector {
  readonly records: FaultRecord[] = [];
  private readonly busy = new Set<string>();

  constructor(
    private readonly deployment: Deployment,
    private readonly receiver: MerchantReceiver,
    private readonly log: (msg: string) => void,
  ) {}

  async run(plan: readonly PlannedFault[], startedAt: number): Promise<void> {
    await Promise.all(
      plan.map(async (fault) => {
        await sleep(Math.max(0, startedAt + fault.atMs - Date.now()));
        await this.inject(fault);
      }),
    );
  }

  /** True while any fault was under way at `at` (or healed less than `graceMs` before). */
  activeAt(at: number, graceMs: number): boolean {
    return this.records.some((r) => !r.skipped && r.start <= at && (r.end === undefined || at <= r.end + graceMs));
  }

  private async inject(fault: PlannedFault): Promise<void> {
    const record: FaultRecord = { ...fault, start: Date.now() };
    this.records.push(record);
    const key = fault.target ? `${fault.target.component}-${fault.target.replica}` : fault.kind.startsWith("receiver") ? "receiver" : fault.kind;
    if (this.busy.has(key)) {
      record.skipped = `${key} is already under a fault`;
      record.end = record.start;
      return;
    }
    this.busy.add(key);
    this.log(`fault ${fault.kind}${fault.target ? ` ${key}` : ""} for ${fault.forMs} ms`);
    try {
      switch (fault.kind) {
        case "kill9": {
          const replica = this.deployment.replicas[fault.target!.component][fault.target!.replica]!;
          await replica.kill9();
          await sleep(fault.forMs);
          replica.start();
          await replica.ready(120_000);
          break;
        }
        case "pause": {
          const replica = this.deployment.replicas[fault.target!.component][fault.target!.replica]!;
          replica.pause();
          await sleep(fault.forMs);
          replica.resume();
          break;
        }
        case "restartNats":
          await this.deployment.nats.stop();
          await sleep(fault.forMs);
          await this.deployment.nats.start();
          break;
        case "restartMariadb":
          await this.deployment.mariadb.stop();
          await sleep(fault.forMs);
          await this.deployment.mariadb.start();
          break;
        case "receiverSlow":
          this.receiver.slowMs = fault.slowMs ?? 3_000;
          this.receiver.mode = "slow";
          await sleep(fault.forMs);
          this.receiver.mode = "ok";
          break;
        case "receiverError":
          this.receiver.mode = "error";
          await sleep(fault.forMs);
          this.receiver.mode = "ok";
          break;
        case "receiverDown":
          await this.receiver.down();
          await sleep(fault.forMs);
          await this.receiver.up();
          break;
      }
    } catch (err) {
      record.error = (err as Error).message.split("\n")[0];
      this.log(`healing ${fault.kind}${fault.target ? ` ${key}` : ""} failed: ${record.error}`);
    } finally {
      record.end = Date.now();
      this.busy.delete(key);
    }
  }

  /** Faults per kind that happened (skipped ones apart). */
  summary(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.records) {
      const name = r.skipped ? `${r.kind}:skipped` : r.kind;
      out[name] = (out[name] ?? 0) + 1;
    }
    return out;
  }
}
