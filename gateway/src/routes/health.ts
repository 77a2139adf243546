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
              return [name, ServingStatus[res.status] ?? "UNKNOWN"];
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
