import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, type Client } from "@connectrpc/connect";
import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { MerchantChangedSchema, MerchantStatus, type GetCredentialsResponse, type MerchantService } from "@payments/contracts/merchant";
import { isApiKeyScope, type ApiKeyScope, type MerchantVoice } from "@payments/access";
import { errorInfo, type Clock, type EventBus, type Logger, type Subscription } from "@payments/kit";
import { parseAllowList, type IpRange } from "./ip-rule.js";
import { scopeMask } from "./key-scopes.js";

/** Named once, in @payments/contracts; re-exported for this package's tests. */
export { MERCHANT_CHANGED_TOPIC };

/** What the gateway needs to authenticate one merchant's requests. */
export interface MerchantCredentials {
  merchantId: string;
  apiKey: string;
  active: boolean;
  sandbox: boolean;
  /** Current first. `expiresAt` is set on rotated-out secrets. */
  secrets: ReadonlyArray<{ secret: string; expiresAt?: Date }>;
  allowedIps: readonly string[];
  /** allowedIps parsed once, for matching. */
  allowList: readonly IpRange[];
  rateLimitPerSecond?: number;
  rateLimitBurst?: number;
  /** What the key may do: the gateway refuses a route outside them, and the services refuse a call outside them again. */
  scopes: readonly ApiKeyScope[];
  /** `scopes` as bits (key-scopes.ts), for the route check. */
  scopeMask: number;
  /** Trusted by the owner for automatic payouts: the merchant's approval threshold does not hold its withdrawals. */
  trusted: boolean;
  /** What every service call of a request signed with this key says for the merchant: made once per cached entry, not per request. */
  voice: MerchantVoice;
}

/** The secrets that verify at `now`: a rotated-out one stops at its expiry even while cached. */
export function secretsValidAt(credentials: MerchantCredentials, now: Date): string[] {
  return credentials.secrets.filter((s) => s.expiresAt === undefined || s.expiresAt.getTime() > now.getTime()).map((s) => s.secret);
}

export type CredentialLookup = Pick<Client<typeof MerchantService>, "getCredentials">;

export interface CredentialCacheOptions {
  merchants: CredentialLookup;
  clock: Clock;
  /** How long a found merchant is kept; 0 turns the cache off (unknown keys included). */
  ttlMs: number;
  /** How long an unknown key is remembered, so a flood of bad keys does not reach the merchant service. */
  negativeTtlMs: number;
  maxEntries?: number;
  logger?: Logger;
}

/** Longer keys are refused without asking the merchant service. */
const MAX_API_KEY_LENGTH = 256;

interface Entry {
  value: MerchantCredentials | null;
  expiresAt: number;
}

function toCredentials(apiKey: string, res: GetCredentialsResponse): MerchantCredentials {
  // A scope this gateway does not know grants nothing; none at all (a merchant service older than scoped keys) admits nothing but what every key may do.
  const scopes = Object.freeze(res.scopes.filter(isApiKeyScope));
  return {
    merchantId: res.merchantId,
    apiKey,
    active: res.status === MerchantStatus.ACTIVE,
    sandbox: res.sandbox,
    secrets: res.secrets.map((s) => (s.expiresAt ? { secret: s.secret, expiresAt: timestampDate(s.expiresAt) } : { secret: s.secret })),
    allowedIps: [...res.allowedIps],
    allowList: parseAllowList(res.allowedIps),
    ...(res.rateLimitPerSecond !== undefined ? { rateLimitPerSecond: res.rateLimitPerSecond } : {}),
    ...(res.rateLimitBurst !== undefined ? { rateLimitBurst: res.rateLimitBurst } : {}),
    scopes,
    scopeMask: scopeMask(scopes),
    trusted: res.trusted,
    voice: Object.freeze({ merchantId: res.merchantId, keyId: apiKey, scopes, trusted: res.trusted }),
  };
}

/**
 * GetCredentials by API key, kept briefly. Entries are dropped when the merchant service
 * announces a change (MerchantChanged), so a disabled merchant or a new IP list applies at
 * once rather than after the TTL.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<MerchantCredentials | null>>();
  /** Bumped by every invalidation: a lookup that started before one must not store its answer. */
  private generation = 0;
  private readonly maxEntries: number;

  constructor(private readonly options: CredentialCacheOptions) {
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** The merchant behind the key, or undefined when the key is unknown. Service failures are thrown. */
  async get(apiKey: string): Promise<MerchantCredentials | undefined> {
    if (apiKey.length === 0 || apiKey.length > MAX_API_KEY_LENGTH) return undefined;
    const now = this.options.clock.now().getTime();
    const cached = this.entries.get(apiKey);
    if (cached && cached.expiresAt > now) return cached.value ?? undefined;
    if (cached) this.entries.delete(apiKey);

    let pending = this.inflight.get(apiKey);
    if (!pending) {
      pending = this.fetch(apiKey);
      this.inflight.set(apiKey, pending);
      const settled = pending;
      void settled.then(
        () => this.inflight.get(apiKey) === settled && this.inflight.delete(apiKey),
        () => this.inflight.get(apiKey) === settled && this.inflight.delete(apiKey),
      );
    }
    return (await pending) ?? undefined;
  }

  private async fetch(apiKey: string): Promise<MerchantCredentials | null> {
    const generation = this.generation;
    let value: MerchantCredentials | null;
    try {
      value = toCredentials(apiKey, await this.options.merchants.getCredentials({ apiKey }));
    } catch (err) {
      const info = errorInfo(err);
      // An unknown or malformed key is an answer, not a failure.
      if (info.code !== Code.NotFound && info.code !== Code.InvalidArgument) throw err;
      value = null;
    }
    const { ttlMs, negativeTtlMs } = this.options;
    const ttl = ttlMs === 0 ? 0 : value ? ttlMs : negativeTtlMs;
    if (ttl > 0 && generation === this.generation) {
      if (this.entries.size >= this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
      this.entries.set(apiKey, { value, expiresAt: this.options.clock.now().getTime() + ttl });
    }
    return value;
  }

  /** Drops whatever is known about a key or a merchant (both when both are given). */
  invalidate(target: { apiKey?: string; merchantId?: string }): void {
    this.generation++;
    if (target.apiKey) {
      this.entries.delete(target.apiKey);
      this.inflight.delete(target.apiKey);
    }
    if (target.merchantId) {
      for (const [key, entry] of this.entries) {
        if (entry.value?.merchantId === target.merchantId) {
          this.entries.delete(key);
          this.inflight.delete(key);
        }
      }
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.inflight.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops entries as MerchantChanged events arrive. */
  watch(bus: EventBus): Promise<Subscription> {
    return bus.watch([MERCHANT_CHANGED_TOPIC], async (message) => {
      try {
        const event = fromBinary(MerchantChangedSchema, message.data);
        this.invalidate({ apiKey: event.apiKey, merchantId: event.merchantId });
        this.options.logger?.debug({ merchantId: event.merchantId, change: event.change }, "credentials dropped");
      } catch (err) {
        // Unreadable: forget everything rather than keep what may be stale.
        this.options.logger?.warn({ err }, "unreadable merchant_changed event; credential cache cleared");
        this.clear();
      }
    });
  }
}
