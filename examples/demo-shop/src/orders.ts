import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The shop's orders, kept in one JSON file in the data directory so a restart keeps them
 * (a real shop has a database). The order id is the deposit's processId, which is how a
 * callback finds its order.
 */

export type OrderStatus =
  /** Created here; the deposit is not created yet (or creating it failed: see `error`). */
  | "new"
  /** The deposit exists and waits for the customer's transfer. */
  | "pending"
  | "completed"
  | "failed"
  | "expired"
  | "cancelled";

export interface Order {
  id: string;
  product: { id: string; name: string };
  /** Kuruş, as the API counts. */
  amount: number;
  currency: string;
  bankCode?: string;
  customer: { id: string; name: string; username: string };
  status: OrderStatus;
  transactionId?: string;
  checkoutUrl?: string;
  /** Why the deposit could not be created. */
  error?: string;
  /** The highest callback sequence applied: an older callback arriving late never undoes a newer one. */
  sequence: number;
  /** Event ids already applied: a redelivered callback changes nothing. */
  eventIds: string[];
  createdAt: string;
  updatedAt: string;
}

/** What a verified callback says about a deposit. */
export interface DepositUpdate {
  eventId: string;
  processId?: string;
  transactionId: string;
  status: string;
  sequence: number;
}

export type UpdateOutcome = "applied" | "duplicate" | "stale" | "unknown-order";

const KNOWN: readonly OrderStatus[] = ["pending", "completed", "failed", "expired", "cancelled"];

export class OrderStore {
  readonly #file: string;
  readonly #orders = new Map<string, Order>();

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.#file = join(dataDir, "orders.json");
    try {
      for (const order of JSON.parse(readFileSync(this.#file, "utf8")) as Order[]) this.#orders.set(order.id, order);
    } catch {
      // First run: no orders yet.
    }
  }

  /** Short and unique enough for a demo; well inside processId's 50 characters. */
  static newId(): string {
    return `ord_${Date.now().toString(36)}${randomBytes(4).toString("hex")}`;
  }

  list(): Order[] {
    return [...this.#orders.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  get(id: string): Order | undefined {
    return this.#orders.get(id);
  }

  save(order: Order): Order {
    order.updatedAt = new Date().toISOString();
    this.#orders.set(order.id, order);
    this.#flush();
    return order;
  }

  /**
   * Applies a callback once, in order: a redelivery (same event id) and anything with a
   * sequence not above the last applied are acknowledged but change nothing, so the
   * gateway stops retrying either way.
   */
  applyDepositUpdate(update: DepositUpdate): { outcome: UpdateOutcome; order?: Order } {
    const order = (update.processId && this.#orders.get(update.processId)) || this.list().find((o) => o.transactionId === update.transactionId);
    if (!order) return { outcome: "unknown-order" };
    if (order.eventIds.includes(update.eventId)) return { outcome: "duplicate", order };
    order.eventIds.push(update.eventId);
    if (update.sequence <= order.sequence) {
      this.save(order);
      return { outcome: "stale", order };
    }
    order.sequence = update.sequence;
    order.transactionId ??= update.transactionId;
    if ((KNOWN as readonly string[]).includes(update.status)) order.status = update.status as OrderStatus;
    this.save(order);
    return { outcome: "applied", order };
  }

  /** Write to a temporary file and rename: a crash mid-write never leaves half a file. */
  #flush(): void {
    const tmp = `${this.#file}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.list(), null, 2)}\n`);
    renameSync(tmp, this.#file);
  }
}
