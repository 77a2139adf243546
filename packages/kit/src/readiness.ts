/**
 * Readiness: whether this process should be sent work now. Liveness (`/livez`) is only that
 * the event loop answers; readiness (`/readyz`, grpc.health.v1) is every registered check
 * passing and the process not draining.
 *
 * startServices registers: `migrations` (pending until the start got past migrating; a
 * module that does not migrate at start may register its own pending-migrations check),
 * `database:<module>` (a `select 1` with a short timeout), `bus` (JetStream connected with
 * its stream and every durable consumer running; the in-process bus always). Draining is
 * set as soon as shutdown begins (SIGTERM), before anything closes.
 */

/** A check passes by returning true (or nothing); false, a string (the reason) or a throw fails it. */
export type ReadinessCheck = () => Promise<boolean | string | void> | boolean | string | void;

export interface ReadinessReport {
  ready: boolean;
  /** Each check: "ok", or why not. */
  checks: Record<string, string>;
}

export interface ReadinessOptions {
  /** How long a result is reused, so frequent probes cost one round of checks. Default 1 s. */
  cacheMs?: number;
  /** A check that takes longer fails ("timed out"). Default 1 s. */
  checkTimeoutMs?: number;
}

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;
  private cached: { at: number; report: ReadinessReport } | undefined;
  private inFlight: Promise<ReadinessReport> | undefined;
  private readonly listeners = new Set<(ready: boolean) => void>();
  private last: boolean | undefined;
  private readonly cacheMs: number;
  private readonly checkTimeoutMs: number;

  constructor(options: ReadinessOptions = {}) {
    this.cacheMs = options.cacheMs ?? 1000;
    this.checkTimeoutMs = options.checkTimeoutMs ?? 1000;
  }

  /** Adds (or replaces) a named check; returns a function removing it. */
  add(name: string, check: ReadinessCheck): () => void {
    this.checks.set(name, check);
    this.cached = undefined;
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
      this.cached = undefined;
    };
  }

  /** Shutdown began: not ready from now on, whatever the checks say. */
  setDraining(): void {
    this.draining = true;
    this.cached = undefined;
    this.notify(false);
  }

  isDraining(): boolean {
    return this.draining;
  }

  /** Called with the new state whenever an evaluation changes it. */
  onChange(listener: (ready: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The checks' results, reused for cacheMs; concurrent callers share one evaluation. */
  async evaluate(): Promise<ReadinessReport> {
    if (this.cached && Date.now() - this.cached.at < this.cacheMs) return this.cached.report;
    this.inFlight ??= this.run().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async run(): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.checks.entries()].map(async ([name, check]): Promise<[string, string]> => [name, await this.runOne(check)]),
    );
    const checks = Object.fromEntries(entries);
    if (this.draining) checks.draining = "shutting down";
    const report = { ready: !this.draining && entries.every(([, r]) => r === "ok"), checks };
    this.cached = { at: Date.now(), report };
    this.notify(report.ready);
    return report;
  }

  private async runOne(check: ReadinessCheck): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve("timed out"), this.checkTimeoutMs);
        timer.unref();
      });
      const result = await Promise.race([Promise.resolve().then(check), timeout]);
      if (result === "timed out") return result;
      if (result === undefined || result === true) return "ok";
      if (result === false) return "failed";
      return result;
    } catch (err) {
      return (err instanceof Error ? err.message : String(err)).slice(0, 200) || "failed";
    } finally {
      clearTimeout(timer);
    }
  }

  private notify(ready: boolean): void {
    if (ready === this.last) return;
    this.last = ready;
    for (const listener of this.listeners) listener(ready);
  }
}

/**
 * A database check for Readiness: `select 1`, at most one in flight (a hung database costs
 * one connection attempt, not one per probe).
 */
export function databaseCheck(db: { raw(sql: string): PromiseLike<unknown> }): ReadinessCheck {
  let pending: Promise<true | string> | undefined;
  return () => {
    pending ??= Promise.resolve(db.raw("select 1"))
      .then(
        () => true as const,
        (err: unknown) => `database: ${(err instanceof Error ? err.message : String(err)).slice(0, 200)}`,
      )
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}
