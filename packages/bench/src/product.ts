import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client, Interceptor } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { createServiceClient, deriveDatabaseUrl, type TransportOptions } from "@payments/kit";
import { createAssertionSigner, generateAssertionKeyPair, type AssertionSigner, loadAssertionPrivateKey, operatorAssertionInterceptor } from "@payments/access";
import { freePort } from "@payments/testing";
import type { Merchant } from "./load.js";
import { rssKib } from "./proc-stats.js";
import type { ScratchResources } from "./scratch-resources.js";
import { nodeEntry, spawnServer, waitForHttp200, type ServerProcess } from "./server-process.js";

/** One process of a product deployment, with its cold start. */
export interface ProductProcess {
  name: string;
  server: ServerProcess;
  /** Spawn → ready (ready line or health check 200), in ms. */
  coldStartMs: number;
  idleRssMiB?: number;
}

export interface RunningProduct {
  target: "aio" | "split";
  gatewayUrl: string;
  /** Its JetStream stream, to watch events on. */
  stream: { NATS_URL: string; NATS_STREAM: string; NATS_SUBJECT_PREFIX: string };
  processes: ProductProcess[];
  pids: number[];
  /**
   * Clients of the internal services. The merchant, catalog and payout ones, and
   * operatorDeposits, act as the bench's operator (a signed admin assertion on every call);
   * `deposits` calls as the gateway and the bank integrations do, without one, so the deposits
   * and bank reports the scenarios make cost what theirs cost.
   */
  clients: {
    merchants: Client<typeof MerchantService>;
    bankCatalog: Client<typeof BankCatalogService>;
    deposits: Client<typeof DepositService>;
    operatorDeposits: Client<typeof DepositService>;
    payouts: Client<typeof PayoutService>;
  };
  /** The bench's operator (an admin service account), for clients of its own. */
  operator: AssertionSigner;
  /**
   * The console (operators and merchants: CONSOLE_AUDIENCE=both) the all-in-one serves on
   * CONSOLE_PORT when given the operator's private key, as `pnpm start` does; only when asked
   * for (startAllInOne's `console`), so the other scenarios measure the process without it.
   */
  consoleUrl?: string;
  /** Where a service answers, and the transport options (internal token) its callers need. */
  serviceUrl(name: ServiceName): string;
  transport: TransportOptions;
  /** A service's own MySQL database. */
  databaseUrl(name: ServiceName): string;
  /** SIGTERM every process (gateway first) and wait; the exit of each, for the report. */
  stop(): Promise<Array<{ name: string; code: number | null; signal: string | null }>>;
}

const READY = /"msg":"ready/;

const SERVICES = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"] as const;
export type ServiceName = (typeof SERVICES)[number];

/**
 * The bench's operator: a key pair of the run's own, whose public half the product's services
 * verify (OPERATOR_ASSERTION_PUBLIC_KEY), and an interceptor signing every call as an admin
 * service account. The run's merchants are sandbox ones, so nothing it does waits for a second
 * operator.
 */
export function benchOperator(): { env: { OPERATOR_ASSERTION_PUBLIC_KEY: string }; privateKeyPem: string; signer: AssertionSigner; interceptor: Interceptor } {
  const { privateKeyPem, publicKeyPem } = generateAssertionKeyPair();
  // A service account's assertion may live an hour: signed once per service, not per call.
  const signer = createAssertionSigner(loadAssertionPrivateKey(privateKeyPem), { subject: "bench@localhost", name: "pnpm bench", role: "admin", kind: "service" }, { ttlSeconds: 3600 });
  return { env: { OPERATOR_ASSERTION_PUBLIC_KEY: publicKeyPem }, privateKeyPem, signer, interceptor: operatorAssertionInterceptor(signer) };
}

function productClients(url: (service: "merchant" | "bank-catalog" | "deposit" | "payout") => string, transport: TransportOptions, operator: Interceptor): RunningProduct["clients"] {
  const signed = { ...transport, interceptors: [operator] };
  return {
    merchants: createServiceClient(MerchantService, url("merchant"), signed),
    bankCatalog: createServiceClient(BankCatalogService, url("bank-catalog"), signed),
    deposits: createServiceClient(DepositService, url("deposit"), transport),
    operatorDeposits: createServiceClient(DepositService, url("deposit"), signed),
    payouts: createServiceClient(PayoutService, url("payout"), signed),
  };
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // Settings of the caller's own shell must not leak into the product under test.
  for (const name of Object.keys(env)) {
    if (/^(DATABASE_URL|NATS_|GRPC_|INTERNAL_|MERCHANT_SERVICE|BANK_CATALOG_SERVICE|DEPOSIT_SERVICE|PAYOUT_SERVICE|CALLBACK_|PUBLIC_BASE_URL|PORT$|HOST$|MASTER_KEY|LOG_LEVEL|NODE_OPTIONS|OPERATOR_ASSERTION_|PAYMENTS_OPERATOR|CONSOLE_)/.test(name)) delete env[name];
  }
  return env;
}

function profileFlags(profileDir: string | undefined, name: string): string[] {
  if (!profileDir) return [];
  const dir = join(profileDir, name);
  mkdirSync(dir, { recursive: true });
  return ["--cpu-prof", "--cpu-prof-dir", dir];
}

/** Idle resident memory of every process, read after `idleMs` without load. */
async function sampleIdleRss(processes: ProductProcess[], idleMs: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  for (const p of processes) {
    const kib = rssKib(p.server.pid);
    if (kib !== undefined) p.idleRssMiB = Math.round((kib / 1024) * 10) / 10;
  }
}

async function stopAll(processes: ProductProcess[]) {
  const exits: Array<{ name: string; code: number | null; signal: string | null }> = [];
  // The gateway first, then the services in reverse start order, as a deployment drains.
  for (const p of [...processes].reverse()) {
    await p.server.stop(20_000);
    const { code, signal } = await p.server.exited;
    exits.push({ name: p.name, code, signal });
  }
  return exits;
}

/**
 * `pnpm start` on MySQL + JetStream: one process. PORT and GRPC_PORT are picked free ports
 * (not 0) so readiness can be seen by GET /healthz on the gateway even at LOG_LEVEL=warn,
 * which leaves out the info-level ready line; a ready line, when printed, counts too. With
 * `console`, it also holds the operator's private key and serves the console on CONSOLE_PORT
 * (both audiences, as `pnpm start`), ready when its /readyz answers 200.
 */
export async function startAllInOne(resources: ScratchResources, options: { profileDir?: string | undefined; idleMs: number; console?: boolean }): Promise<RunningProduct> {
  const [port, grpcPort] = [await freePort(), await freePort()];
  const consolePort = options.console ? await freePort() : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-aio-"));
  const stream = resources.stream("aio");
  const operator = benchOperator();
  const databaseUrl = resources.database("aio");
  const env: NodeJS.ProcessEnv = {
    ...cleanEnv(),
    ...operator.env,
    DATABASE_URL: databaseUrl,
    ...stream,
    PORT: String(port),
    GRPC_PORT: String(grpcPort),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    MASTER_KEY: randomBytes(32).toString("hex"),
    CALLBACK_ALLOW_PRIVATE: "1",
    ...(consolePort ? { OPERATOR_ASSERTION_PRIVATE_KEY: operator.privateKeyPem, CONSOLE_PORT: String(consolePort), CONSOLE_HOST: "127.0.0.1", CONSOLE_AUDIENCE: "both" } : {}),
  };
  const server = spawnServer("all-in-one", nodeEntry("packages/all-in-one"), env, { nodeFlags: profileFlags(options.profileDir, "all-in-one") });
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const grpcUrl = `http://127.0.0.1:${grpcPort}`;
  let readyAt: number;
  try {
    const line = server.waitForLine((l) => (READY.test(l) ? performance.now() : undefined), 120_000);
    line.catch(() => undefined);
    readyAt = await Promise.race([line, waitForHttp200(`${gatewayUrl}/healthz`, server, 120_000)]);
    if (consolePort) readyAt = Math.max(readyAt, await waitForHttp200(`http://127.0.0.1:${consolePort}/readyz`, server, 120_000));
  } catch (err) {
    await server.stop(5_000);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const processes: ProductProcess[] = [{ name: "all-in-one", server, coldStartMs: Math.round(readyAt - server.spawnedAt) }];
  await sampleIdleRss(processes, options.idleMs);
  return {
    target: "aio",
    gatewayUrl,
    stream,
    processes,
    pids: [server.pid],
    clients: productClients(() => grpcUrl, {}, operator.interceptor),
    operator: operator.signer,
    ...(consolePort ? { consoleUrl: `http://127.0.0.1:${consolePort}` } : {}),
    serviceUrl: () => grpcUrl,
    transport: {},
    databaseUrl: (name) => deriveDatabaseUrl(databaseUrl, name),
    async stop() {
      const exits = await stopAll(processes);
      rmSync(dataDir, { recursive: true, force: true });
      return exits;
    },
  };
}


/**
 * Every service its own process with its own MySQL database, JetStream between them, the
 * internal token on every call, then the gateway: as docker-compose runs them. Started one at
 * a time, so each cold start is its own.
 */
export async function startSplit(resources: ScratchResources, options: { profileDir?: string | undefined; idleMs: number }): Promise<RunningProduct> {
  const token = randomBytes(24).toString("hex");
  const ports = {} as Record<ServiceName, number>;
  for (const name of SERVICES) ports[name] = await freePort();
  const gatewayPort = await freePort();
  const url = (name: ServiceName) => `http://127.0.0.1:${ports[name]}`;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-split-"));
  const stream = resources.stream("split");
  const operator = benchOperator();
  const common: NodeJS.ProcessEnv = { ...cleanEnv(), ...operator.env, ...stream, INTERNAL_API_TOKEN: token, LOG_LEVEL: "warn", GRPC_HOST: "127.0.0.1", DATA_DIR: dataDir };
  const urls = {
    MERCHANT_SERVICE_URL: url("merchant"),
    BANK_CATALOG_SERVICE_URL: url("bank-catalog"),
    DEPOSIT_SERVICE_URL: url("deposit"),
    PAYOUT_SERVICE_URL: url("payout"),
    CALLBACK_SENDER_SERVICE_URL: url("callback-sender"),
  };
  const own: Record<ServiceName, NodeJS.ProcessEnv> = {
    merchant: { MASTER_KEY: randomBytes(32).toString("hex"), CALLBACK_ALLOW_PRIVATE: "1", DEPOSIT_SERVICE_URL: urls.DEPOSIT_SERVICE_URL, PAYOUT_SERVICE_URL: urls.PAYOUT_SERVICE_URL },
    "bank-catalog": {},
    deposit: { MERCHANT_SERVICE_URL: urls.MERCHANT_SERVICE_URL, BANK_CATALOG_SERVICE_URL: urls.BANK_CATALOG_SERVICE_URL, PUBLIC_BASE_URL: `http://127.0.0.1:${gatewayPort}` },
    payout: { MERCHANT_SERVICE_URL: urls.MERCHANT_SERVICE_URL, BANK_CATALOG_SERVICE_URL: urls.BANK_CATALOG_SERVICE_URL },
    "callback-sender": { MERCHANT_SERVICE_URL: urls.MERCHANT_SERVICE_URL, CALLBACK_ALLOW_PRIVATE: "1", PUBLIC_BASE_URL: `http://127.0.0.1:${gatewayPort}` },
  };
  const processes: ProductProcess[] = [];
  try {
    for (const name of SERVICES) {
      const env = { ...common, ...own[name], DATABASE_URL: resources.database(`split_${name.replace(/-/g, "_")}`), GRPC_PORT: String(ports[name]) };
      const server = spawnServer(name, nodeEntry(`services/${name}`), env, { nodeFlags: profileFlags(options.profileDir, `split-${name}`) });
      processes.push({ name, server, coldStartMs: 0 });
      const readyAt = await waitForHttp200(`${url(name)}/healthz`, server, 120_000);
      processes.at(-1)!.coldStartMs = Math.round(readyAt - server.spawnedAt);
    }
    const gatewayEnv = { ...cleanEnv(), ...stream, ...urls, INTERNAL_API_TOKEN: token, LOG_LEVEL: "warn", PORT: String(gatewayPort), HOST: "127.0.0.1", PUBLIC_BASE_URL: `http://127.0.0.1:${gatewayPort}` };
    const gateway = spawnServer("gateway", nodeEntry("gateway"), gatewayEnv, { nodeFlags: profileFlags(options.profileDir, "split-gateway") });
    processes.push({ name: "gateway", server: gateway, coldStartMs: 0 });
    const readyAt = await waitForHttp200(`http://127.0.0.1:${gatewayPort}/healthz`, gateway, 120_000);
    processes.at(-1)!.coldStartMs = Math.round(readyAt - gateway.spawnedAt);
  } catch (err) {
    await stopAll(processes);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  await sampleIdleRss(processes, options.idleMs);
  const transport = { token };
  return {
    target: "split",
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    stream,
    processes,
    pids: processes.map((p) => p.server.pid),
    clients: productClients(url, transport, operator.interceptor),
    operator: operator.signer,
    serviceUrl: url,
    transport,
    databaseUrl: (name) => resources.database(`split_${name.replace(/-/g, "_")}`),
    async stop() {
      const exits = await stopAll(processes);
      rmSync(dataDir, { recursive: true, force: true });
      return exits;
    },
  };
}

/** fn(0..count-1), `concurrency` at a time; none is started after `deadline` (performance.now()), so the result may be shorter. */
export async function inParallel<T>(count: number, concurrency: number, fn: (i: number) => Promise<T>, deadline = Infinity): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count && performance.now() < deadline; i = next++) out.push(await fn(i));
    }),
  );
  return out;
}

/**
 * The merchants of a run: sandbox (deposits go to the seeded sandbox accounts), allowed IPs
 * 127.0.0.1 and ::1 (withdrawals need an allow-list), callbacks to the receiver, no rate
 * limit, and a balance funded by an operator adjustment so withdrawals succeed.
 */
export async function createMerchants(product: RunningProduct, count: number, callbackUrl: string): Promise<Merchant[]> {
  const { merchants, bankCatalog, payouts } = product.clients;
  // A split install starts without receiving accounts; the all-in-one seeds them itself.
  if (product.target === "split") await bankCatalog.seedSandboxAccounts({});
  return inParallel(count, 8, async (i) => {
    const created = await merchants.createMerchant({ name: `Bench Shop ${i}`, sandbox: true, allowedIps: ["127.0.0.1", "::1"], callbackUrl });
    const merchantId = created.merchant!.id;
    await merchants.setRateLimit({ merchantId, requestsPerSecond: 0 });
    await payouts.adjustBalance({ merchantId, amount: 10_000_000_000n, reason: "bench funding" });
    return { merchantId, apiKey: created.merchant!.apiKey, apiSecret: created.apiSecret };
  });
}

/** How the deposits of createDepositsByRpc are made, when not the default (50,000 kuruş, any bank, one customer name). */
export interface DepositShape {
  /** A bank id: the deposit is assigned one of that bank's receiving accounts. */
  bankId?: string;
  amount?: (n: number) => bigint;
  customerName?: (n: number) => string;
}

/**
 * Pending deposits made straight through the deposit service (for reads and confirms when
 * the POST scenario made too few; for the bank-report scenarios, on one bank's accounts); no
 * new one is started after `deadline`.
 */
export async function createDepositsByRpc(
  product: RunningProduct,
  merchants: readonly Merchant[],
  count: number,
  tag: string,
  deadline = Infinity,
  shape: DepositShape = {},
): Promise<Array<{ merchantIndex: number; id: string; deposit: Deposit }>> {
  return inParallel(count, 32, async (n) => {
    const merchantIndex = n % merchants.length;
    const res = await product.clients.deposits.createDeposit({
      merchantId: merchants[merchantIndex]!.merchantId,
      processId: `${tag}-${merchantIndex}-${n}`,
      amount: shape.amount?.(n) ?? 50_000n,
      currency: "",
      bankId: shape.bankId ?? "",
      customer: { id: `cus_${n}`, name: shape.customerName?.(n) ?? "Ayşe Yılmaz", username: "ayse" },
      metadataJson: "",
    });
    return { merchantIndex, id: res.deposit!.id, deposit: res.deposit! };
  }, deadline);
}
