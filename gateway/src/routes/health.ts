import type { Client } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus as ServingStatus, type Health } from "@payments/contracts/health";
import type { Clock } from "@payments/kit";
import { success } from "../envelope.js";
import { ApiError } from "../errors.js";
import type { Route } from "./route.js";

export type HealthClient = Pick<Client<typeof Health>, "check">;

/**
 * GET /healthz, for load balancers: 200 only when every service the gateway needs answers
 * SERVING within the timeout; otherwise 503 with each service's status in error.details.
 */
export function health(deps: { services: Record<string, HealthClient>; clock: Clock; timeoutMs: number }): Route[] {
  return [
    {
      method: "GET",
      path: "/healthz",
      access: "public",
      handler: async (ctx) => {
        const entries = await Promise.all(
          Object.entries(deps.services).map(async ([name, client]): Promise<[string, string]> => {
            try {
              const res = await client.check({ service: "" }, { timeoutMs: deps.timeoutMs });
              // A status this build's enum does not name (a newer service) has no name: UNKNOWN, so not SERVING.
              const status = ServingStatus[res.status] as string | undefined;
              return [name, status ?? "UNKNOWN"];
            } catch {
              return [name, "UNREACHABLE"];
            }
          }),
        );
        const services = Object.fromEntries(entries);
        ctx.set("Cache-Control", "no-store");
        if (!entries.every(([, status]) => status === "SERVING")) {
          throw new ApiError(503, "SERVICE_UNAVAILABLE", "A backing service is not serving", services);
        }
        ctx.body = success({ status: "SERVING", services }, deps.clock);
      },
    },
  ];
}

/** What the gateway's readiness depends on: its own ability to serve. */
export interface GatewayReadiness {
  /** Listening, configuration loaded (the app exists only then). */
  listening(): boolean;
  /** Shutdown began. */
  draining(): boolean;
}

/**
 * GET /livez and GET /readyz, for orchestrators. /livez: the process answers. /readyz: this
 * gateway can serve (configuration loaded, listening, not draining). Neither asks the
 * backing services: one service down must not take every gateway out of its load balancer
 * (its routes answer 503 SERVICE_UNAVAILABLE meanwhile; /healthz still reports them). NATS
 * is not part of it either: it only carries cache invalidations, and a cached credential or
 * bank list that misses one expires within its TTL (CREDENTIAL_CACHE_TTL, CATALOG_CACHE_TTL).
 */
export function probes(deps: { readiness: GatewayReadiness; clock: Clock }): Route[] {
  return [
    {
      method: "GET",
      path: "/livez",
      access: "public",
      handler: (ctx) => {
        ctx.set("Cache-Control", "no-store");
        ctx.body = success({ status: "ok" }, deps.clock);
      },
    },
    {
      method: "GET",
      path: "/readyz",
      access: "public",
      handler: (ctx) => {
        ctx.set("Cache-Control", "no-store");
        const checks = {
          server: deps.readiness.listening() ? "ok" : "not listening",
          draining: deps.readiness.draining() ? "shutting down" : "ok",
        };
        if (!Object.values(checks).every((c) => c === "ok")) {
          throw new ApiError(503, "SERVICE_UNAVAILABLE", "The gateway is not ready", checks);
        }
        ctx.body = success({ status: "READY", checks }, deps.clock);
      },
    },
  ];
}
