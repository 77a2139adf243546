import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { type RunningServices, type ServiceModule, type StartOptions } from "@payments/kit";
import { startServices } from "@payments/access";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { createCallbackModule } from "@payments/callback-sender-service";
import { depositModule } from "@payments/deposit-service";
import { merchantModule } from "@payments/merchant-service";
import { createPayoutModule } from "@payments/payout-service";
import { addTestReceivingAccounts } from "./receiving-accounts.js";
import { createServiceClient, registerServiceClock, TEST_OPERATOR_ENV } from "./operators.js";

/** The services by name, as their modules call themselves, in the order the all-in-one starts them. */
export const SERVICE_NAMES = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** `<NAME>_SERVICE_URL`, the setting that points a service (or the gateway, or the CLI) at another. */
export function serviceUrlVariable(name: ServiceName): string {
  return `${name.toUpperCase().replace(/-/g, "_")}_SERVICE_URL`;
}

/** `<NAME>_SERVICE_URL` of every service at one address: services started in one process, for a gateway or the CLI. */
export function serviceUrlsAt(url: string): Record<string, string> {
  return Object.fromEntries(SERVICE_NAMES.map((name) => [serviceUrlVariable(name), url]));
}

/** A service's default module by name (payout and callback-sender made afresh, as createPayoutModule() and createCallbackModule() make them). */
export function serviceModule(name: ServiceName): ServiceModule {
  switch (name) {
    case "merchant":
      return merchantModule;
    case "bank-catalog":
      return bankCatalogModule;
    case "deposit":
      return depositModule;
    case "payout":
      return createPayoutModule();
    case "callback-sender":
      return createCallbackModule();
  }
}

export interface InProcessOptions extends Omit<StartOptions, "mode"> {
  /** "all-in-one" (one database per service, derived from DATABASE_URL) unless told. */
  mode?: StartOptions["mode"];
  /** Receiving accounts of both kinds once they run (addTestReceivingAccounts, with the env's INTERNAL_API_TOKEN): a fresh install has none. */
  receivingAccounts?: boolean;
}

/**
 * Services started in this process the way the all-in-one starts them (one port, one bus): the
 * peers a test needs by name, and modules of its own (the service under test, or a peer made
 * with options), in the order given; on a free port unless `env` names one (GRPC_PORT 0 is set on
 * `env` itself: the services keep reading that object, so a test may fill in a peer's URL later).
 */
export async function startInProcess(services: ReadonlyArray<ServiceName | ServiceModule>, options: InProcessOptions = {}): Promise<RunningServices> {
  const { receivingAccounts, mode = "all-in-one", env = {}, ...rest } = options;
  const modules = services.map((s) => (typeof s === "string" ? serviceModule(s) : s));
  env.GRPC_PORT ??= "0";
  // The test operators' key and the test workloads' bundle, so the harness clients are believed, and each module's own key for its calls out.
  for (const [key, value] of Object.entries(TEST_OPERATOR_ENV)) env[key] ??= value;
  const running = await startServices(modules, { ...rest, mode, env });
  if (rest.clock) {
    // The harness clients sign their assertions at the time these services verify them at.
    const unregister = registerServiceClock(running.server.url, rest.clock);
    const stop = running.stop.bind(running);
    running.stop = () => {
      unregister();
      return stop();
    };
  }
  if (receivingAccounts) {
    const token = env.INTERNAL_API_TOKEN;
    await addTestReceivingAccounts(createServiceClient(BankCatalogService, running.server.url, token ? { token } : {}));
  }
  return running;
}
