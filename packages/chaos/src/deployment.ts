import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { generateAssertionKeyPair, type OperatorIdentity } from "@payments/access";
import { withServerConnection } from "@payments/kit";
import { createTestDatabaseUser, freePort, startMariadbServer, startNatsServer, type OwnMariadbServer, type OwnNatsServer, type TestDatabaseUser } from "@payments/testing";
import { Balancer } from "./balancer.js";
import { operatorSigner, RunWorkloads, serviceClient } from "./identities.js";
import { compiledEntry, Replica, repoRoot } from "./processes.js";

export const SERVICES = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"] as const;
export type ServiceName = (typeof SERVICES)[number];
export type Component = ServiceName | "gateway";
export const COMPONENTS: readonly Component[] = [...SERVICES, "gateway"];

export const REPLICAS = 2;

/** Settings the run gives the deployment so a few minutes show what hours would: short TTLs, leases and retries. */
export const RUN_SETTINGS = {
  depositTtlMs: 20_000,
  resendAfterMs: 8_000,
  callbackTimeoutMs: 2_000,
  callbackClaimMs: 5_000,
  /** Retries every few seconds for long enough to outlast any receiver outage of the schedule. */
  callbackRetrySchedule: ["1s", "2s", "3s", ...Array<string>(60).fill("5s")].join(","),
} as const;

/** Who the run acts as on the internal services (an admin service account), and the second operator who approves what needs one. */
export const CHAOS_OPERATOR: OperatorIdentity = { subject: "chaos-operator@localhost", name: "chaos run", role: "admin", kind: "service" };
export const CHAOS_APPROVER: OperatorIdentity = { subject: "chaos-approver@localhost", name: "chaos run's second operator", role: "admin", kind: "service" };

/**
 * The workloads the run plays itself, each with a key of its own (none is a service's): `chaos`
 * carries its operators' calls, `bank-integration/chaos` imports the bank's statements, and the
 * `pnpm cli reconcile` it runs is the CLI.
 */
export const HARNESS_WORKLOADS = ["chaos", "bank-integration/chaos", "cli"] as const;

export interface Deployment {
  mariadb: OwnMariadbServer;
  nats: OwnNatsServer;
  token: string;
  /** The run's own operator key (PKCS#8 PEM): its services verify assertions against its public half; the CLI the run starts signs with it. */
  operatorKey: string;
  /** Every workload key of the run (each service's, the gateway's, the harness's) and the trust bundle of them all. */
  workloads: RunWorkloads;
  replicas: Record<Component, Replica[]>;
  balancers: Record<Component, Balancer>;
  gatewayUrl: string;
  serviceUrl(name: ServiceName): string;
  /** A service's database as root (the run's checks read it); its replicas serve as `runtimeUsers[name]`. */
  databaseUrl(name: ServiceName): string;
  /** Each service's least-privilege runtime user: its tables' grants only (the audit append-only), no DDL. */
  runtimeUsers: Record<ServiceName, TestDatabaseUser>;
  clients: {
    merchants: Client<typeof MerchantService>;
    bankCatalog: Client<typeof BankCatalogService>;
    deposits: Client<typeof DepositService>;
    payouts: Client<typeof PayoutService>;
    callbacks: Client<typeof CallbackService>;
    /** The deposit service as the run's bank integration (`bank-integration/chaos`) calls it for itself: statement imports. */
    bankFeed: Client<typeof DepositService>;
  };
  allReplicas(): Replica[];
  stop(): Promise<void>;
  killNow(): void;
}

/**
 * The split deployment as production runs it, twice over: two replicas of every service
 * (compiled, one process each, one MySQL database per service shared by its replicas) and two
 * gateways, each behind a round-robin balancer; a MariaDB and a JetStream server of the
 * run's own, which the fault schedule restarts. Every process has its deployable's workload key
 * (WORKLOAD_KEY) and believes the run's trust bundle (WORKLOAD_TRUST_BUNDLE); the harness calls
 * with keys of its own (HARNESS_WORKLOADS). Each service serves as a database user of its own that
 * holds only its tables' grants (no DDL, the audit append-only): its replicas create, migrate and
 * grant as root at start (MIGRATE_DATABASE_URL, MIGRATE_GRANT_TO), as production's migrate step does.
 */
export async function startDeployment(options: { logDir: string; bankUrl: string; log: (msg: string) => void }): Promise<Deployment> {
  const [mariadb, nats] = await Promise.all([startMariadbServer(), startNatsServer()]);
  const token = randomBytes(24).toString("hex");
  // The run's own operator key pair: the services verify with the public half.
  const operatorKeys = generateAssertionKeyPair();
  // A workload key for every deployable (its replicas share it, as they share a Secret) and for
  // each workload the run plays; every process believes the bundle of their public halves.
  const workloads = new RunWorkloads([...COMPONENTS, ...HARNESS_WORKLOADS]);
  // Clients act as CHAOS_OPERATOR, carried by the workload `chaos`; what the services keep for a
  // second operator (the live receiving accounts, a live merchant's creation and funding) CHAOS_APPROVER
  // approves through the service's ApprovalService, and the call answers what the approved run answered.
  const operatorCalls = {
    caller: workloads.caller("chaos"),
    operator: operatorSigner(operatorKeys.privateKeyPem, CHAOS_OPERATOR),
    approver: operatorSigner(operatorKeys.privateKeyPem, CHAOS_APPROVER),
  };
  const transport = { token };
  const ports = {} as Record<Component, number[]>;
  const lbPorts = {} as Record<Component, number>;
  for (const name of COMPONENTS) {
    ports[name] = [];
    for (let i = 0; i < REPLICAS; i++) ports[name].push(await freePort());
    lbPorts[name] = await freePort();
  }
  const serviceUrl = (name: ServiceName) => `http://127.0.0.1:${lbPorts[name]}`;
  const gatewayUrl = `http://127.0.0.1:${lbPorts.gateway}`;
  const databaseUrl = (name: ServiceName) => mariadb.url(`chaos_${name.replace(/-/g, "_")}`);
  const runtimeUsers = {} as Record<ServiceName, TestDatabaseUser>;
  for (const name of SERVICES) runtimeUsers[name] = await createTestDatabaseUser(databaseUrl(name), `chaos_${name.replace(/-/g, "_")}_`);
  const databaseEnv = (name: ServiceName) => ({ DATABASE_URL: runtimeUsers[name].urlFor(databaseUrl(name)), MIGRATE_DATABASE_URL: databaseUrl(name), MIGRATE_GRANT_TO: runtimeUsers[name].grantee });
  const urls = {
    MERCHANT_SERVICE_URL: serviceUrl("merchant"),
    BANK_CATALOG_SERVICE_URL: serviceUrl("bank-catalog"),
    DEPOSIT_SERVICE_URL: serviceUrl("deposit"),
    PAYOUT_SERVICE_URL: serviceUrl("payout"),
    CALLBACK_SENDER_SERVICE_URL: serviceUrl("callback-sender"),
  };
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NATS_URL: nats.url,
    NATS_STREAM: "CHAOS",
    NATS_SUBJECT_PREFIX: "chaos",
    INTERNAL_API_TOKEN: token,
    OPERATOR_ASSERTION_PUBLIC_KEY: operatorKeys.publicKeyPem,
    LOG_LEVEL: "warn",
    NODE_ENV: "production",
  };
  const masterKey = randomBytes(32).toString("hex");
  const own: Record<ServiceName, NodeJS.ProcessEnv> = {
    merchant: { MASTER_KEY: masterKey, CALLBACK_ALLOW_PRIVATE: "1", DEPOSIT_SERVICE_URL: urls.DEPOSIT_SERVICE_URL, PAYOUT_SERVICE_URL: urls.PAYOUT_SERVICE_URL },
    "bank-catalog": {},
    deposit: {
      MERCHANT_SERVICE_URL: urls.MERCHANT_SERVICE_URL,
      BANK_CATALOG_SERVICE_URL: urls.BANK_CATALOG_SERVICE_URL,
      PUBLIC_BASE_URL: gatewayUrl,
      DEPOSIT_TTL: `${RUN_SETTINGS.depositTtlMs}ms`,
      DEPOSIT_EXPIRY_INTERVAL: "1s",
    },
    payout: {
      MERCHANT_SERVICE_URL: urls.MERCHANT_SERVICE_URL,
      BANK_CATALOG_SERVICE_URL: urls.BANK_CATALOG_SERVICE_URL,
      PAYOUT_RESEND_AFTER: `${RUN_SETTINGS.resendAfterMs}ms`,
      SANDBOX_PAYOUT_DELAY: "300ms",
      CHAOS_BANK_URL: options.bankUrl,
    },
    "callback-sender": {
      MERCHANT_SERVICE_URL: urls.MERCHANT_SERVICE_URL,
      CALLBACK_ALLOW_PRIVATE: "1",
      PUBLIC_BASE_URL: gatewayUrl,
      CALLBACK_RETRY_SCHEDULE: RUN_SETTINGS.callbackRetrySchedule,
      CALLBACK_TIMEOUT: `${RUN_SETTINGS.callbackTimeoutMs}ms`,
      CALLBACK_CLAIM_TIMEOUT: `${RUN_SETTINGS.callbackClaimMs}ms`,
    },
  };
  const entry = (name: Component): string[] =>
    // The payout service with the run's bank as its live connector (payout-with-bank.ts), every other one as built.
    name === "payout" ? ["--import", "tsx", join(repoRoot, "packages/chaos/src/payout-with-bank.ts")] : compiledEntry(name === "gateway" ? "gateway" : `services/${name}`);
  const replicas = {} as Record<Component, Replica[]>;
  for (const name of SERVICES) {
    replicas[name] = ports[name].map(
      (port, i) =>
        new Replica(
          `${name}-${i}`,
          port,
          entry(name),
          { ...base, ...workloads.envOf(name), ...own[name], ...databaseEnv(name), GRPC_HOST: "127.0.0.1", GRPC_PORT: String(port) },
          join(options.logDir, `${name}-${i}.log`),
        ),
    );
  }
  replicas.gateway = ports.gateway.map(
    (port, i) =>
      new Replica(`gateway-${i}`, port, entry("gateway"), { ...base, ...workloads.envOf("gateway"), ...urls, PORT: String(port), HOST: "127.0.0.1", PUBLIC_BASE_URL: gatewayUrl }, join(options.logDir, `gateway-${i}.log`)),
  );
  const balancers = {} as Record<Component, Balancer>;
  for (const name of COMPONENTS) {
    balancers[name] = new Balancer(name, ports[name]);
    await balancers[name].listen(lbPorts[name]);
  }
  const allReplicas = () => COMPONENTS.flatMap((name) => replicas[name]);
  const deployment: Deployment = {
    mariadb,
    nats,
    token,
    replicas,
    balancers,
    gatewayUrl,
    serviceUrl,
    databaseUrl,
    runtimeUsers,
    operatorKey: operatorKeys.privateKeyPem,
    workloads,
    clients: {
      merchants: serviceClient(MerchantService, serviceUrl("merchant"), transport, operatorCalls),
      bankCatalog: serviceClient(BankCatalogService, serviceUrl("bank-catalog"), transport, operatorCalls),
      deposits: serviceClient(DepositService, serviceUrl("deposit"), transport, operatorCalls),
      payouts: serviceClient(PayoutService, serviceUrl("payout"), transport, operatorCalls),
      callbacks: serviceClient(CallbackService, serviceUrl("callback-sender"), transport, operatorCalls),
      bankFeed: serviceClient(DepositService, serviceUrl("deposit"), transport, { caller: workloads.caller("bank-integration/chaos") }),
    },
    allReplicas,
    async stop() {
      for (const replica of allReplicas().reverse()) await replica.stop(10_000);
      for (const balancer of Object.values(balancers)) await balancer.close();
      await Promise.all([mariadb.destroy(), nats.destroy()]);
    },
    killNow() {
      for (const replica of allReplicas()) replica.killNow();
    },
  };
  try {
    // The first replica of each service alone (it creates its database and migrates), then the second ones together.
    for (const name of SERVICES) {
      const first = replicas[name][0]!;
      first.start();
      await first.ready(120_000);
      options.log(`${first.name} ready on :${first.port}`);
    }
    const rest = SERVICES.flatMap((name) => replicas[name].slice(1));
    for (const replica of rest) replica.start();
    await Promise.all(rest.map((replica) => replica.ready(120_000)));
    for (const gateway of replicas.gateway) gateway.start();
    await Promise.all(replicas.gateway.map((gateway) => gateway.ready(120_000)));
    options.log(`all ${allReplicas().length} processes ready; gateway at ${gatewayUrl}`);
    for (const name of SERVICES) await assertAuditAppendOnly(databaseUrl(name), runtimeUsers[name], name);
    options.log("each service serves as its own database user, which may only read and append to its audit");
  } catch (err) {
    deployment.killNow();
    await deployment.stop().catch(() => undefined);
    throw err;
  }
  return deployment;
}

/** What the replicas' migrate step granted: on the audit, the service's runtime user holds SELECT and INSERT, nothing more. */
async function assertAuditAppendOnly(rootUrl: string, runtime: TestDatabaseUser, name: ServiceName): Promise<void> {
  const held = await withServerConnection(rootUrl, (server) =>
    server("information_schema.TABLE_PRIVILEGES").where({ GRANTEE: runtime.grantee, TABLE_SCHEMA: new URL(rootUrl).pathname.slice(1), TABLE_NAME: "operator_audit" }).select<Array<{ PRIVILEGE_TYPE: string }>>("PRIVILEGE_TYPE"),
  );
  const privileges = held.map((h) => h.PRIVILEGE_TYPE).sort().join(", ");
  if (privileges !== "INSERT, SELECT") throw new Error(`${name}'s runtime user ${runtime.grantee} holds [${privileges}] on operator_audit, not [INSERT, SELECT]`);
}
