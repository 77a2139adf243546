import type { Bank, ReceivingAccount } from "@payments/contracts/bank-catalog";
import { CATALOG_CHANGED_TOPIC } from "@payments/contracts";
import { EventCache, type Clock, type EventBus, type Logger, type Subscription } from "@payments/kit";
import type { Knex } from "knex";
import { bankFromRow, bankMessage, fastFromRow, getFastSettingsRow, listAccountRows, listBankRows, listMerchantLimitRows, overrideFromRow, receivingAccountMessage } from "./store.js";
import { accountPool, type AccountPool, type CatalogAccount, type CatalogBank, type CatalogInput, type FastConfig, type LimitOverride } from "./limits.js";

/** An active receiving account as the deposit rules see it, with its message ready to send. */
export interface SnapshotAccount extends CatalogAccount {
  message: ReceivingAccount;
}

/**
 * The catalog as read at one moment, for the read RPCs (ListBanks, ListAvailableBanks,
 * GetDepositTerms): every bank, the FAST settings, every active receiving account, and the
 * merchants' overrides as they are first asked for. Orders and messages are worked out once
 * here, not per request.
 */
export interface CatalogSnapshot {
  /** Every bank, active or not, in Turkish name order (ListBanks). */
  banks: readonly Bank[];
  /** The active banks, in Turkish name order. */
  activeBanks: readonly CatalogBank[];
  fast: FastConfig;
  /** The active accounts of each kind, indexed by bank and FAST once per snapshot. */
  pools: { sandbox: AccountPool<SnapshotAccount>; live: AccountPool<SnapshotAccount> };
  /** One merchant's overrides: read once per snapshot, the most recently asked merchants kept. */
  overrides(merchantId: string): Promise<readonly LimitOverride[]>;
}

/** Merchants whose overrides one snapshot keeps; past it the least recently asked is read again when next needed. */
const MAX_MERCHANTS = 10_000;

/** Reads the catalog (three queries; each merchant's overrides later, one query each). */
export async function loadCatalogSnapshot(db: Knex, options: { clock: Clock; ttlMs: number }): Promise<CatalogSnapshot> {
  const [bankRows, fastRow, accountRows] = await Promise.all([listBankRows(db), getFastSettingsRow(db), listAccountRows(db, { activeOnly: true })]);
  const pool = (sandbox: boolean): AccountPool<SnapshotAccount> =>
    accountPool(
      accountRows
        .filter((row) => Boolean(row.sandbox) === sandbox)
        .map((row): SnapshotAccount => ({ id: row.id, bankId: row.bank_id, active: true, fastEnabled: Boolean(row.fast_enabled), message: receivingAccountMessage(row, row.bank_name) })),
    );
  const overrides = new EventCache<readonly LimitOverride[]>({ clock: options.clock, ttlMs: options.ttlMs, maxEntries: MAX_MERCHANTS });
  return {
    banks: bankRows.map(bankMessage),
    activeBanks: bankRows.map(bankFromRow).filter((b) => b.active),
    fast: fastFromRow(fastRow),
    pools: { sandbox: pool(true), live: pool(false) },
    overrides: (merchantId) => overrides.get(merchantId, async () => (await listMerchantLimitRows(db, merchantId)).map(overrideFromRow)),
  };
}

/**
 * The catalog as one merchant of one kind meets it: what ListAvailableBanks and
 * GetDepositTerms both decide from, so a merchant is shown exactly what its deposits get.
 */
export async function merchantCatalog(snapshot: CatalogSnapshot, merchantId: string, sandbox: boolean): Promise<CatalogInput<SnapshotAccount>> {
  return {
    banks: snapshot.activeBanks,
    fast: snapshot.fast,
    overrides: await snapshot.overrides(merchantId),
    // Sandbox and live never mix: a merchant's deposits go only to accounts of its kind.
    pool: sandbox ? snapshot.pools.sandbox : snapshot.pools.live,
    sorted: true,
  };
}

export interface CatalogSnapshotsOptions {
  db: Knex;
  clock: Clock;
  /** CATALOG_CACHE_TTL: how long a snapshot serves when no change event arrives; 0 reads the database on every request. */
  ttlMs: number;
  logger?: Logger;
}

/**
 * This replica's current snapshot. Dropped when this replica commits a change (so it reads
 * its own writes at once), when a CatalogChanged event arrives from any replica, and after
 * the TTL in case an event is lost.
 */
export class CatalogSnapshots {
  private readonly cache: EventCache<CatalogSnapshot>;

  constructor(private readonly options: CatalogSnapshotsOptions) {
    this.cache = new EventCache({ clock: options.clock, ttlMs: options.ttlMs, maxEntries: 1, name: "catalog-snapshot", logger: options.logger });
  }

  current(): Promise<CatalogSnapshot> {
    return this.cache.get("", () => loadCatalogSnapshot(this.options.db, this.options));
  }

  /** Called after a change commits. */
  clear(): void {
    this.cache.clear();
  }

  stats() {
    return this.cache.stats();
  }

  watch(bus: EventBus): Promise<Subscription> {
    return this.cache.watch(bus, [CATALOG_CHANGED_TOPIC]);
  }
}
