import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

export interface SignInThrottleOptions {
  /** Failures per account within the window before that account's sign-in is refused. */
  perAccount: number;
  /** Failures per client IP within the window before that IP's sign-ins are refused. */
  perIp: number;
  windowMs: number;
}

/**
 * Counts failed sign-ins (browser and CLI alike) per account and per client IP, in this
 * process's memory: with one console replica that is the whole count; with several, each
 * counts alone (README: a shared store is the next step). While either count is spent, every
 * attempt is refused before the password is even checked, so guessing costs the attacker the
 * window, not a scrypt round each. A successful sign-in clears its account's count, not its IP's.
 */
export class SignInThrottle {
  private readonly accounts: RateLimiterMemory;
  private readonly ips: RateLimiterMemory;

  constructor(private readonly options: SignInThrottleOptions) {
    const duration = Math.max(1, Math.ceil(options.windowMs / 1000));
    this.accounts = new RateLimiterMemory({ keyPrefix: "account", points: options.perAccount, duration });
    this.ips = new RateLimiterMemory({ keyPrefix: "ip", points: options.perIp, duration });
  }

  /** Milliseconds until the account or the IP may try again, or undefined when both may now. */
  async retryAfter(email: string, ip: string): Promise<number | undefined> {
    const [account, address] = await Promise.all([this.accounts.get(email), this.ips.get(ip)]);
    const waits = [
      account && account.consumedPoints >= this.options.perAccount ? account.msBeforeNext : undefined,
      address && address.consumedPoints >= this.options.perIp ? address.msBeforeNext : undefined,
    ].filter((ms): ms is number => ms !== undefined);
    return waits.length > 0 ? Math.max(...waits, 1) : undefined;
  }

  async failed(email: string, ip: string): Promise<void> {
    await Promise.all([spend(this.accounts, email), spend(this.ips, ip)]);
  }

  async succeeded(email: string): Promise<void> {
    await this.accounts.delete(email);
  }
}

/** consume() rejects with a RateLimiterRes once the points are spent; that is the count going on, not a failure. */
async function spend(limiter: RateLimiterMemory, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
  }
}
