import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import { forUpdate, isMysql, transactionWithRetry, type Migration } from "./db.js";
import { serviceError } from "./errors.js";

/**
 * The mode fence: how a merchant's switch between sandbox and live stays safe across
 * services, replicas and caches (services/merchant/README.md, "Switching between sandbox
 * and live"). The deposit and payout services each keep one row per merchant in their own
 * database, `merchant_mode_fences`:
 *
 * - RaiseModeFence writes the row (exclusive lock) with the switch's fence id and expiry, and
 *   in that same transaction reads whether the merchant has transactions;
 * - every creation (a deposit, a withdrawal) reads the row under a shared lock in the
 *   transaction that inserts it, and is refused MERCHANT_MODE_CHANGING while a fence stands;
 * - LowerModeFence clears the fence and records the merchant's kind as the switch left it.
 *
 * The locks order the two: a creation that read the row first commits before the fence's
 * transaction reads the merchant's transactions (so the switch sees it and is refused), and
 * one that comes after the fence sees it. Sessions run at READ COMMITTED (no gap locks), so
 * the row must exist to be locked: the first creation or fence of a merchant inserts it, and
 * it is never deleted. A creation's merchant facts come from a cache; when the row's kind
 * disagrees with them, or a fence expired without being lowered (the merchant service died
 * mid-switch), the creation asks the merchant service afresh before it goes on (`"refresh"`).
 */
export const MODE_FENCE_TABLE = "merchant_mode_fences";

/** The longest fence a caller may ask for. */
export const MAX_MODE_FENCE_MS = 60_000;

interface FenceRow {
  merchant_id: string;
  fence_id: string | null;
  expires_at: number | string;
  sandbox: boolean | number | null;
}

/** The table's migration, for a service's own migration list (`name` sorts it among them). */
export function modeFenceMigration(name: string): Migration {
  return {
    name,
    async up(db) {
      await db.schema.createTable(MODE_FENCE_TABLE, (t) => {
        t.string("merchant_id", 100).primary();
        // The standing (or last, not yet lowered) switch's id; null once lowered.
        t.string("fence_id", 64).nullable();
        // Epoch ms the fence falls by itself; 0 when none.
        t.bigInteger("expires_at").notNullable().defaultTo(0);
        // The merchant's kind as the last lowered switch left it; null before any.
        t.boolean("sandbox").nullable();
        t.bigInteger("updated_at").notNullable().defaultTo(0);
      });
    },
    async down(db) {
      await db.schema.dropTable(MODE_FENCE_TABLE);
    },
  };
}

export function merchantModeChanging(merchantId: string): Error {
  return serviceError(
    Code.FailedPrecondition,
    "MERCHANT_MODE_CHANGING",
    `merchant ${merchantId} is switching between sandbox and live; nothing was created, retry in a few seconds`,
  );
}

/** The merchant's row, locked (shared or exclusive), inserted first when the merchant has none. */
async function lockedRow(trx: Knex.Transaction, merchantId: string, mode: "share" | "update", now: number): Promise<FenceRow> {
  const read = async () => {
    const query = trx<FenceRow>(MODE_FENCE_TABLE).where({ merchant_id: merchantId });
    const locked = mode === "update" ? forUpdate(trx, query) : isMysql(trx) ? query.forShare() : query;
    return locked.first<FenceRow | undefined>();
  };
  const row = await read();
  if (row) return row;
  await trx(MODE_FENCE_TABLE).insert({ merchant_id: merchantId, fence_id: null, expires_at: 0, sandbox: null, updated_at: now }).onConflict("merchant_id").ignore();
  const inserted = await read();
  if (!inserted) throw new Error(`${MODE_FENCE_TABLE}: the row of merchant ${merchantId} is missing after its insert`);
  return inserted;
}

/**
 * In a creation's transaction, before its insert: throws MERCHANT_MODE_CHANGING while a fence
 * stands; `"refresh"` when the merchant facts the creation used (`sandbox`, cached unless
 * `fresh`) must be asked afresh first; `"ok"` to go on. With fresh facts that still disagree
 * with the kind the last switch recorded, a switch is under way: refused as well.
 */
export async function checkModeFence(trx: Knex.Transaction, input: { merchantId: string; sandbox: boolean; fresh: boolean; now: number }): Promise<"ok" | "refresh"> {
  const row = await lockedRow(trx, input.merchantId, "share", input.now);
  const expiresAt = Number(row.expires_at);
  if (row.fence_id !== null && expiresAt > input.now) throw merchantModeChanging(input.merchantId);
  const unlowered = row.fence_id !== null;
  const disagrees = row.sandbox !== null && Boolean(row.sandbox) !== input.sandbox;
  if (!unlowered && !disagrees) return "ok";
  if (!input.fresh) return "refresh";
  if (disagrees && !unlowered) throw merchantModeChanging(input.merchantId);
  return "ok";
}

/**
 * Merchants that have a transaction in this service (a deposit, a withdrawal: rows never
 * deleted). No switch between sandbox and live can succeed for them any more, since
 * RaiseModeFence reports that transaction as its blocker, so their kind cannot change and
 * their creations need no fence read: the fence costs a merchant's first creation on each
 * replica, not every one (a hot path reads nothing that changes a few times a year). Per
 * process, in memory, bounded: a merchant pushed out takes the fenced path once more.
 */
export class SettledMerchants {
  private readonly ids = new Set<string>();

  constructor(private readonly max = 100_000) {}

  has(merchantId: string): boolean {
    return this.ids.has(merchantId);
  }

  /** After a creation of the merchant committed. */
  add(merchantId: string): void {
    if (this.ids.has(merchantId)) return;
    if (this.ids.size >= this.max) {
      const oldest = this.ids.values().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
    this.ids.add(merchantId);
  }
}

/** Thrown inside a creation's transaction to run it again with fresh merchant facts (see `retryOn`). */
export class RefreshMerchant extends Error {
  constructor(readonly merchantId: string) {
    super(`merchant ${merchantId}: cached facts may be stale after a switch between sandbox and live`);
  }
}

export interface RaisedFence {
  /** Why the merchant may not switch, from what this service holds; undefined when nothing stops it. */
  blocker?: string;
  expiresAt: number;
}

/**
 * Raises (or renews) the fence `fenceId` for `ttlMs` and, in the same transaction and after the
 * row's exclusive lock, asks `blocker` whether the merchant has transactions here. Another
 * switch's fence that still stands is MERCHANT_MODE_CHANGING.
 */
export async function raiseModeFence(
  db: Knex,
  input: { merchantId: string; fenceId: string; ttlMs: number; now: number },
  blocker: (trx: Knex.Transaction) => Promise<string | undefined>,
): Promise<RaisedFence> {
  const ttlMs = Math.min(Math.max(input.ttlMs, 1), MAX_MODE_FENCE_MS);
  return transactionWithRetry(db, async (trx) => {
    const row = await lockedRow(trx, input.merchantId, "update", input.now);
    if (row.fence_id !== null && row.fence_id !== input.fenceId && Number(row.expires_at) > input.now) throw merchantModeChanging(input.merchantId);
    const expiresAt = input.now + ttlMs;
    await trx(MODE_FENCE_TABLE).where({ merchant_id: input.merchantId }).update({ fence_id: input.fenceId, expires_at: expiresAt, updated_at: input.now });
    return { blocker: await blocker(trx), expiresAt };
  });
}

/** Lowers the fence `fenceId` (not one that replaced it) and records the merchant's kind; false when it was not this fence. */
export async function lowerModeFence(db: Knex, input: { merchantId: string; fenceId: string; sandbox: boolean; now: number }): Promise<boolean> {
  const changed = await db(MODE_FENCE_TABLE)
    .where({ merchant_id: input.merchantId, fence_id: input.fenceId })
    .update({ fence_id: null, expires_at: 0, sandbox: input.sandbox, updated_at: input.now });
  return changed > 0;
}
