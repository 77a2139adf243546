import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { type Env, type Logger, type RunningServices, type ServiceModule } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, TEST_OPERATOR_ENV } from "./operators.js";
import { createLeastPrivilegeDatabase, type LeastPrivilegeDatabase } from "./databases.js";
import { SERVICE_NAMES, serviceModule, serviceUrlVariable, type ServiceName } from "./in-process.js";
import { deleteTestStream, jetStreamTestEnv, type JetStreamTestEnv } from "./jetstream.js";
import { addTestReceivingAccounts } from "./receiving-accounts.js";

/** Which peers' URLs each service is given (the merchant's when they all run: it asks deposit and payout only on a sandbox switch). */
const PEERS: Record<ServiceName, readonly ServiceName[]> = {
  merchant: [],
  "bank-catalog": [],
  deposit: ["merchant", "bank-catalog"],
  payout: ["merchant", "bank-catalog"],
  "callback-sender": ["merchant"],
};
const LATE_PEERS: Partial<Record<ServiceName, readonly ServiceName[]>> = { merchant: ["deposit", "payout"] };

export interface SplitDeploymentOptions {
  /** The services to start, in this order, each alone: split mode, a MySQL database of its own, events over JetStream. */
  services: readonly ServiceName[];
  /** INTERNAL_API_TOKEN of every service. */
  token: string;
  /** Settings every service gets (GRPC_PORT 0, LOG_LEVEL warn, the stream's, the token, unless these say otherwise). */
  common?: Env;
  /** Settings of one service, over the common ones (its DATABASE_URL and its peers' URLs are added). */
  env?: Partial<Record<ServiceName, Env>>;
  /** A module other than the service's default one (a payout module with connectors of the test's own). */
  modules?: Partial<Record<ServiceName, ServiceModule>>;
  /** A logger per service. */
  logger?: (name: ServiceName) => Logger;
  /** A NATS server of the test's own (one it stops); default the local one, whose test stream stop() deletes. */
  natsUrl?: string;
  /** Receiving accounts of both kinds, added through the catalog's RPCs once it runs: a split install starts with none. */
  receivingAccounts?: boolean;
}

/** The services of a split deployment a test started, with what it needs to reach them. */
export interface SplitDeployment {
  /** The stream and subject prefix of this deployment (for a gateway, or an observer of its events). */
  js: JetStreamTestEnv;
  token: string;
  /**
   * Each service's database: `url` is root's (inspect tables with it), `runtime` the user the
   * service serves with, which holds only the grants its migrate step gave it (no DDL).
   */
  databases: Partial<Record<ServiceName, LeastPrivilegeDatabase>>;
  /** A running service (throws when it was not started). */
  service(name: ServiceName): RunningServices;
  url(name: ServiceName): string;
  /** A client of a running service, with the token. */
  client<S extends DescService>(service: S, name: ServiceName): Client<S>;
  /** `<NAME>_SERVICE_URL` of all five, for a gateway or the CLI: the running ones, `absent` for the others. */
  serviceUrls(absent: string): Record<string, string>;
  /** Stops the services (last started first), drops their databases and, on the local NATS server, the stream. */
  stop(): Promise<void>;
}

/**
 * Each service alone, as `docker compose` runs them: its own settings, its own MySQL database,
 * events over JetStream only, the peers it calls at their `<NAME>_SERVICE_URL`. Each serves as a
 * least-privilege runtime user of its own (DATABASE_URL), which cannot even create its database:
 * root creates and migrates it and grants the runtime user its tables (MIGRATE_DATABASE_URL,
 * MIGRATE_GRANT_TO), as production's migrate step does, so every suite on it proves the services
 * work without DDL rights and with the audit append-only.
 */
export async function startSplitDeployment(options: SplitDeploymentOptions): Promise<SplitDeployment> {
  const js = { ...jetStreamTestEnv(), ...(options.natsUrl ? { NATS_URL: options.natsUrl } : {}) };
  const running = new Map<ServiceName, RunningServices>();
  const envs = new Map<ServiceName, Env>();
  const databases: SplitDeployment["databases"] = {};
  const created = await Promise.all(options.services.map(() => createLeastPrivilegeDatabase()));
  options.services.forEach((name, i) => (databases[name] = created[i]));
  const service = (name: ServiceName) => {
    const found = running.get(name);
    if (!found) throw new Error(`${name} is not part of this deployment`);
    return found;
  };
  const deployment: SplitDeployment = {
    js,
    token: options.token,
    databases,
    service,
    url: (name) => service(name).server.url,
    client: (desc, name) => createServiceClient(desc, service(name).server.url, { token: options.token }),
    serviceUrls: (absent) =>
      Object.fromEntries(SERVICE_NAMES.map((name) => [serviceUrlVariable(name), running.get(name)?.server.url ?? absent])),
    async stop() {
      for (const name of [...running.keys()].reverse()) await running.get(name)?.stop();
      running.clear();
      await Promise.all(created.map((d) => d.drop()));
      if (!options.natsUrl) await deleteTestStream(js);
    },
  };
  const peerUrls = (peers: readonly ServiceName[] | undefined) => Object.fromEntries((peers ?? []).filter((p) => running.has(p)).map((p) => [serviceUrlVariable(p), service(p).server.url]));
  try {
    for (const name of options.services) {
      const env: Env = { GRPC_PORT: "0", LOG_LEVEL: "warn", ...TEST_OPERATOR_ENV, ...js, INTERNAL_API_TOKEN: options.token, ...options.common, ...databases[name]!.env, ...peerUrls(PEERS[name]), ...options.env?.[name] };
      envs.set(name, env);
      const module = options.modules?.[name] ?? serviceModule(name);
      const started = await startServices([module], { mode: "split", env, logger: options.logger?.(name) });
      running.set(name, started);
      if (env.DATABASE_URL === databases[name]!.env.DATABASE_URL) await assertServesAsRuntimeUser(started, name, databases[name]!);
      if (name === "bank-catalog" && options.receivingAccounts) await addTestReceivingAccounts(deployment.client(BankCatalogService, "bank-catalog"));
    }
    // Filled in once they listen: the services read these when they first need them.
    for (const [name, env] of envs) Object.assign(env, peerUrls(LATE_PEERS[name]), options.env?.[name]);
  } catch (err) {
    await deployment.stop().catch(() => undefined);
    throw err;
  }
  return deployment;
}

/** The harness's own check that a suite on it runs with least privilege: the service's database connections are its runtime user's. */
async function assertServesAsRuntimeUser(started: RunningServices, name: ServiceName, database: LeastPrivilegeDatabase): Promise<void> {
  const db = started.contexts.get(name)?.db;
  const [rows] = db ? ((await db.raw("SELECT CURRENT_USER() AS who")) as [Array<{ who: string }>]) : [[]];
  const who = rows[0]?.who;
  if (who !== `${database.runtime.user}@%`) throw new Error(`startSplitDeployment: ${name} serves as ${who ?? "nobody"}, not its least-privilege runtime user ${database.runtime.grantee}`);
}
