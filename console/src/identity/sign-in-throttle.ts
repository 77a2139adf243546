export interface SignInThrottleOptions {
  /** Failures for an account within the window before attempts without a valid code are refused. */
  perAccount: number;
  /** Failures from one client address within the window before its attempts without a valid code are refused. */
  perIp: number;
  windowMs: number;
  /** How long an address an account signed in from stays known to it (default 30 days). */
  knownAddressMs?: number;
  /** Keys each count keeps at most (default 100,000): past that, those whose window ends soonest go first. */
  maxKeys?: number;
}

const DAY_MS = 24 * 3600_000;

/**
 * Failures per key in fixed windows on the caller's clock: the first failure opens a window of
 * `windowMs`, and once `limit` failures are in it the key is locked until it closes. More
 * failures while locked are counted but never lengthen the lock, so a party that keeps failing
 * cannot push the end further away. Memory is bounded: past `maxKeys` keys, expired ones are
 * dropped, then those that expire soonest (a Map keeps insertion order, which is expiry order).
 */
class WindowCounts {
  private readonly counts = new Map<string, { failures: number; endsAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  /** Milliseconds until `key` is no longer locked, or undefined when it is not. */
  lockedFor(key: string, now: number): number | undefined {
    const entry = this.counts.get(key);
    if (!entry || entry.endsAt <= now || entry.failures < this.limit) return undefined;
    return entry.endsAt - now;
  }

  add(key: string, now: number): void {
    const entry = this.counts.get(key);
    if (entry && entry.endsAt > now) {
      entry.failures += 1;
      return;
    }
    this.counts.delete(key);
    this.counts.set(key, { failures: 1, endsAt: now + this.windowMs });
    if (this.counts.size > this.maxKeys) this.sweep(now);
  }

  clear(key: string): void {
    this.counts.delete(key);
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.counts) if (entry.endsAt <= now) this.counts.delete(key);
    for (const key of this.counts.keys()) {
      if (this.counts.size <= this.maxKeys) break;
      this.counts.delete(key);
    }
  }
}

/**
 * The address a client is counted by: an IPv4 address as it is (an IPv4-mapped IPv6 one as its
 * IPv4), an IPv6 address by its /64, which one subscriber usually holds whole: counting each of
 * its 2^64 addresses apart would throttle nobody.
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  if (!ip.includes(":")) return ip;
  const bare = ip.replace(/%.*$/, "").toLowerCase();
  // An IPv4 tail (64:ff9b::1.2.3.4) takes the room of two groups.
  const groupsIn = (part: string) => (part ? part.split(":").reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0) : 0);
  const [head = "", tail] = bare.split("::");
  const groups = tail === undefined ? head.split(":") : [...(head ? head.split(":") : []), ...Array<string>(Math.max(0, 8 - groupsIn(head) - groupsIn(tail))).fill("0")];
  return `${groups
    .slice(0, 4)
    .map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16).toString(16) : g))
    .join(":")}::/64`;
}

/**
 * Sign-in throttling (browser and CLI alike, operators and merchant users) that guessing cannot
 * turn against an account's owner. It counts failures per account, per (account, address) and per
 * address, in fixed windows, in this process's memory on the console's clock (one console
 * replica: README). `check` says whether an attempt is locked out:
 *
 * - by its address, once that address failed `perIp` times (guessing many accounts from one place);
 * - by the account, once it failed `perAccount` times from anywhere (guessing one account from
 *   many places), unless the address is one the account signed in from (within
 *   `knownAddressMs`): there only the (account, address) count, `perAccount` too, applies, so a
 *   party elsewhere cannot lock the owner out of their usual place.
 *
 * A locked attempt is not judged like others (auth/sign-in.ts): only one that carries a valid,
 * unused TOTP code of the account goes on to the password, so the owner of an account with TOTP
 * signs in through any lock, and everything else answers the same 429 before any scrypt round.
 */
export class SignInThrottle {
  private readonly accounts: WindowCounts;
  private readonly pairs: WindowCounts;
  private readonly ips: WindowCounts;
  private readonly known = new Map<string, number>();
  private readonly knownAddressMs: number;
  private readonly maxKeys: number;

  constructor(options: SignInThrottleOptions) {
    this.maxKeys = options.maxKeys ?? 100_000;
    this.accounts = new WindowCounts(options.perAccount, options.windowMs, this.maxKeys);
    this.pairs = new WindowCounts(options.perAccount, options.windowMs, this.maxKeys);
    this.ips = new WindowCounts(options.perIp, options.windowMs, this.maxKeys);
    this.knownAddressMs = options.knownAddressMs ?? 30 * DAY_MS;
  }

  /** Milliseconds until attempts for `account` from `ip` are judged normally again, or undefined when they are now. */
  check(account: string, ip: string, now: number): number | undefined {
    const address = addressKey(ip);
    const pair = pairKey(account, address);
    const knownUntil = this.known.get(pair);
    const waits = [this.ips.lockedFor(address, now), this.pairs.lockedFor(pair, now), knownUntil !== undefined && knownUntil > now ? undefined : this.accounts.lockedFor(account, now)];
    const locked = waits.filter((ms): ms is number => ms !== undefined);
    return locked.length > 0 ? Math.max(...locked, 1) : undefined;
  }

  /** A failed or refused attempt: it counts for the account, the pair and the address alike. */
  failed(account: string, ip: string, now: number): void {
    const address = addressKey(ip);
    this.accounts.add(account, now);
    this.pairs.add(pairKey(account, address), now);
    this.ips.add(address, now);
  }

  /**
   * A successful sign-in clears the count of its (account, address), the owner's own typos, and
   * makes the address known to the account. The account's count and the address's go on: they
   * count other parties' guesses too, which the owner's success says nothing about.
   */
  succeeded(account: string, ip: string, now: number): void {
    const pair = pairKey(account, addressKey(ip));
    this.pairs.clear(pair);
    this.known.delete(pair);
    this.known.set(pair, now + this.knownAddressMs);
    if (this.known.size > this.maxKeys) {
      for (const key of this.known.keys()) {
        if (this.known.size <= this.maxKeys) break;
        this.known.delete(key);
      }
    }
  }
}

function pairKey(account: string, address: string): string {
  return `${account}\n${address}`;
}
