import { bankCatalogModule, seedSandboxAccounts } from "@payments/bank-catalog-service";
import { callbackModule } from "@payments/callback-sender-service";
import { startConsole, type RunningConsole } from "@payments/console";
import { startGateway } from "@payments/gateway";
import { accessGuard, createLocalIdentities, localIdentity, spiffeId, startServices } from "@payments/access";
import { createLogger, envVar, loadConfig, type Clock, type Env, type RunningServices } from "@payments/kit";
import { depositModule } from "@payments/deposit-service";
import { merchantModule } from "@payments/merchant-service";
import { payoutModule } from "@payments/payout-service";
import { z } from "zod";
import { resolveMasterKey, resolveOperatorKeys, resolveWorkloadIdentities } from "./master-key.js";

/** Every service of the product, in start order. */
export const allModules = [merchantModule, bankCatalogModule, depositModule, payoutModule, callbackModule] as const;

const configSchema = z.object({
  DATA_DIR: z.string().default("./var"),
  LOG_LEVEL: envVar.logLevel(),
});

export interface AllInOne {
  services: RunningServices;
  gateway: Awaited<ReturnType<typeof startGateway>>;
  /** The operators' console on CONSOLE_PORT, signing with the same key the services verify (absent when this process has no private key). */
  console: RunningConsole | undefined;
  stop(): Promise<void>;
}

/**
 * Every service and the gateway in one process: services on GRPC_PORT, the gateway on
 * PORT, one event bus (in-process, or JetStream with NATS_URL), SQLite files under
 * DATA_DIR unless DATABASE_URL names a MySQL server (one database per service).
 */
export async function startAllInOne(options: { env?: Env; clock?: Clock } = {}): Promise<AllInOne> {
  const baseEnv = options.env ?? process.env;
  const config = loadConfig(configSchema, baseEnv);
  const logger = createLogger({ service: "all-in-one", level: config.LOG_LEVEL });
  const env: Env = {
    ...baseEnv,
    MASTER_KEY: resolveMasterKey(baseEnv, config.DATA_DIR, logger),
    ...resolveOperatorKeys(baseEnv, config.DATA_DIR, logger),
    ...resolveWorkloadIdentities(baseEnv, config.DATA_DIR, logger),
  };
  // The parts of this process call each other in process, each as itself (README, "Workload identities"):
  // the same tables as over the network, proven by a secret that never leaves the process.
  const local = createLocalIdentities();
  const trustDomain = env.WORKLOAD_TRUST_DOMAIN || "payments.local";
  const services = await startServices([...allModules], { mode: "all-in-one", env, clock: options.clock, logger, guard: accessGuard({ local }) });
  let gateway: AllInOne["gateway"] | undefined;
  let operatorConsole: RunningConsole | undefined;
  try {
    // The all-in-one is for trying the product: sandbox merchants can take deposits at once.
    // Only sandbox merchants' deposits ever go to these made-up accounts; a live merchant
    // gets BANK_UNAVAILABLE until an operator adds a live account.
    const catalog = services.contexts.get(bankCatalogModule.name);
    if (catalog) {
      const added = await seedSandboxAccounts(catalog.db, (options.clock ?? { now: () => new Date() }).now().getTime());
      if (added.length > 0) logger.info({ added: added.length }, "sandbox receiving accounts seeded");
    }
    // The gateway calls the services in process (same handlers and interceptors as the
    // GRPC_PORT, which still serves the CLI and internal systems), not over loopback HTTP/2.
    const inProcess = services.localTransport;
    gateway = await startGateway({
      env,
      bus: services.bus,
      logger,
      // One registry: /metrics on PORT and on GRPC_PORT show the gateway and every service.
      metrics: services.metrics,
      clock: options.clock,
      transports: { merchant: inProcess, bankCatalog: inProcess, deposit: inProcess, payout: inProcess, callback: inProcess },
      identity: localIdentity(local, spiffeId(trustDomain, "gateway")),
    });
    // The console signs what the services verify: it needs the private half, which the all-in-one
    // has unless OPERATOR_ASSERTION_PUBLIC_KEY points at someone else's console.
    if (env.OPERATOR_ASSERTION_PRIVATE_KEY) {
      // One console serves both the operators and the merchant dashboard (/merchant) here, unless told otherwise.
      const audience = env.CONSOLE_AUDIENCE ?? "both";
      operatorConsole = await startConsole({
        env: { ...env, CONSOLE_AUDIENCE: audience },
        logger,
        metrics: services.metrics,
        clock: options.clock,
        transport: inProcess,
        identity: localIdentity(local, spiffeId(trustDomain, audience === "merchants" ? "merchant-dashboard" : "console")),
      });
    } else {
      logger.warn("OPERATOR_ASSERTION_PUBLIC_KEY is set without OPERATOR_ASSERTION_PRIVATE_KEY: the console is not started here (the console that holds the key serves operators)");
    }
  } catch (err) {
    await gateway?.stop();
    await services.stop();
    throw err;
  }
  const started = gateway;
  return {
    services,
    gateway: started,
    console: operatorConsole,
    async stop() {
      await operatorConsole?.stop();
      await started.stop();
      await services.stop();
    },
  };
}
