import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@payments/contracts/health";
import type { Readiness } from "./readiness.js";

/**
 * Standard grpc.health.v1: "" is the whole server, and each registered service has its
 * own status. Everything turns NOT_SERVING when shutdown starts, so balancers drain first.
 * Once it follows a Readiness (`follow`), every status is SERVING exactly when the process is
 * ready (database, bus, migrations, not draining), and Check evaluates readiness first.
 */
export class HealthRegistry {
  private readonly statuses = new Map<string, Status>([["", Status.SERVING]]);
  private readonly listeners = new Set<() => void>();
  private readiness: Readiness | undefined;
  private serving = true;

  register(serviceName: string): void {
    this.statuses.set(serviceName, this.serving ? Status.SERVING : Status.NOT_SERVING);
    this.emit();
  }

  /** Every status follows `readiness` from now on. */
  follow(readiness: Readiness): void {
    this.readiness = readiness;
    readiness.onChange((ready) => this.setAll(ready));
  }

  setAll(serving: boolean): void {
    this.serving = serving;
    for (const key of this.statuses.keys()) this.statuses.set(key, serving ? Status.SERVING : Status.NOT_SERVING);
    this.emit();
  }

  get(serviceName: string): Status | undefined {
    return this.statuses.get(serviceName);
  }

  entries(): Array<[string, Status]> {
    return [...this.statuses.entries()];
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  routes(router: ConnectRouter): void {
    router.service(Health, {
      check: async (req) => {
        if (this.readiness) await this.readiness.evaluate();
        const status = this.get(req.service);
        if (status === undefined) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
        return { status };
      },
      list: () => ({
        statuses: Object.fromEntries(this.entries().map(([name, status]) => [name, { status }])),
      }),
      watch: (req, ctx) => this.watch(req.service, ctx.signal),
    });
  }

  private async *watch(service: string, signal: AbortSignal): AsyncGenerator<{ status: Status }> {
    {
        let last: Status | undefined;
        while (!signal.aborted) {
          const status = this.get(service) ?? Status.SERVICE_UNKNOWN;
          if (status !== last) {
            last = status;
            yield { status };
          }
          await new Promise<void>((resolve) => {
            const off = this.onChange(() => {
              off();
              resolve();
            });
            signal.addEventListener("abort", () => {
              off();
              resolve();
            });
          });
        }
    }
  }
}
