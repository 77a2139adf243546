import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, type TransportOptions } from "@payments/kit";
import { sign } from "@payments/signing";
import { freePort } from "@payments/testing";
import { benchIdentities, operatorClient, workloadClient, type BenchIdentities } from "./identities.js";
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
   * Clients of the internal services. Every one but `bankReports` acts as the bench's operator
   * (an admin service account: a signed assertion on every call, a fresh one on each change,
   * carried by the workload `bench`); `bankReports` is the deposit service as the workload
   * `bank-integration/bench` calls it for itself, with no person, as a bank integration reports
   * a transfer. Deposits for a merchant are made through the gateway (createDeposits).
   */
  clients: {
    merchants: Client<typeof MerchantService>;
    bankCatalog: Client<typeof BankCatalogService>;
    deposits: Client<typeof DepositService>;
    bankReports: Client<typeof DepositService>;
    payouts: Client<typeof PayoutService>;
  };
  /** The bench's operator and workload keys, for clients of its own (identities.ts). */
  identities: BenchIdentities;
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
 * The bench's clients (see RunningProduct.clients). Its operator is an admin service account
 * whose key pair is the run's own (the services verify its public half); the run's merchants
 * are sandbox ones, so nothing it does waits for a second operator.
 */
function productClients(url: (service: "merchant" | "bank-catalog" | "deposit" | "payout") => string, transport: TransportOptions, identities: BenchIdentities): RunningProduct["clients"] {
  return {
    merchants: operatorClient(MerchantService, url("merchant"), transport, identities),
    bankCatalog: operatorClient(BankCatalogService, url("bank-catalog"), transport, identities),
    deposits: operatorClient(DepositService, url("deposit"), transport, identities),
    bankReports: workloadClient(DepositService, url("deposit"), transport, identities, "bank-integration/bench"),
    payouts: operatorClient(PayoutService, url("payout"), transport, identities),
  };
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // Settings of the caller's own shell must not leak into the product under test.
  for (const name of Object.keys(env)) {
    if (/^(DATABASE_URL|NATS_|GRPC_|INTERNAL_|MERCHANT_SERVICE|BANK_CATALOG_SERVICE|DEPOSIT_SERVICE|PAYOUT_SERVICE|CALLBACK_|PUBLIC_BASE_URL|PORT$|HOST$|MASTER_KEY|LOG_LEVEL|NODE_OPTIONS|OPERATOR_ASSERTION_|PAYMENTS_OPERATOR|CONSOLE_|WORKLOAD_)/.test(name)) delete env[name];
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
 * (both audiences, as `pnpm start`), ready when its /readyz answers 200. Its parts call each
 * other in process (identities of its own); it believes the bench's workloads through
 * WORKLOAD_TRUST_BUNDLE, merged with the keys it makes in DATA_DIR/workloads.
 */
export async function startAllInOne(resources: ScratchResources, options: { profileDir?: string | undefined; idleMs: number; console?: boolean }): Promise<RunningProduct> {
  const [port, grpcPort] = [await freePort(), await freePort()];
  const consolePort = options.console ? await freePort() : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-aio-"));
  const stream = resources.stream("aio");
  const identities = benchIdentities();
  const databaseUrl = resources.database("aio");
  const env: NodeJS.ProcessEnv = {
    ...cleanEnv(),
    ...identities.operatorEnv,
    ...identities.workloads.trustEnv(),
    DATABASE_URL: databaseUrl,
    ...stream,
    PORT: String(port),
    GRPC_PORT: String(grpcPort),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    MASTER_KEY: randomBytes(32).toString("hex"),
    CALLBACK_ALLOW_PRIVATE: "1",
    ...(consolePort ? { OPERATOR_ASSERTION_PRIVATE_KEY: identities.operatorKeyPem, CONSOLE_PORT: String(consolePort), CONSOLE_HOST: "127.0.0.1", CONSOLE_AUDIENCE: "both" } : {}),
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
    clients: productClients(() => grpcUrl, {}, identities),
    identities,
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
 * a time, so each cold start is its own. Each process has a workload key of the run's own
 * (WORKLOAD_KEY) and believes the bundle of every key of the run (WORKLOAD_TRUST_BUNDLE).
 */
export async function startSplit(resources: ScratchResources, options: { profileDir?: string | undefined; idleMs: number }): Promise<RunningProduct> {
  const token = randomBytes(24).toString("hex");
  const ports = {} as Record<ServiceName, number>;
  for (const name of SERVICES) ports[name] = await freePort();
  const gatewayPort = await freePort();
  const url = (name: ServiceName) => `http://127.0.0.1:${ports[name]}`;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-split-"));
  const stream = resources.stream("split");
  const identities = benchIdentities([...SERVICES, "gateway"]);
  const common: NodeJS.ProcessEnv = { ...cleanEnv(), ...identities.operatorEnv, ...stream, INTERNAL_API_TOKEN: token, LOG_LEVEL: "warn", GRPC_HOST: "127.0.0.1", DATA_DIR: dataDir };
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
      const env = { ...common, ...identities.workloads.envOf(name), ...own[name], DATABASE_URL: resources.database(`split_${name.replace(/-/g, "_")}`), GRPC_PORT: String(ports[name]) };
      const server = spawnServer(name, nodeEntry(`services/${name}`), env, { nodeFlags: profileFlags(options.profileDir, `split-${name}`) });
      processes.push({ name, server, coldStartMs: 0 });
      const readyAt = await waitForHttp200(`${url(name)}/healthz`, server, 120_000);
      processes.at(-1)!.coldStartMs = Math.round(readyAt - server.spawnedAt);
    }
    const gatewayEnv = { ...cleanEnv(), ...identities.workloads.envOf("gateway"), ...stream, ...urls, INTERNAL_API_TOKEN: token, LOG_LEVEL: "warn", PORT: String(gatewayPort), HOST: "127.0.0.1", PUBLIC_BASE_URL: `http://127.0.0.1:${gatewayPort}` };
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
    clients: productClients(url, transport, identities),
    identities,
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

/** How the deposits of createDeposits are made, when not the default (50,000 kuruş, any bank, one customer name). */
export interface DepositShape {
  /** A bank id (the API's `bankCode`): the deposit is assigned one of that bank's receiving accounts. */
  bankId?: string;
  amount?: (n: number) => bigint;
  customerName?: (n: number) => string;
}

/** A deposit createDeposits made, as the gateway answered it. */
export interface MadeDeposit {
  merchantIndex: number;
  id: string;
  /** The bank asked for ("" for any). */
  bankId: string;
  /** The API's status name (`pending`). */
  status: string;
  /** The receiving account assigned ("" for none). */
  iban: string;
  requestedAmount: bigint;
  currency: string;
  reference: string;
  customerName: string;
}

/** Deposits made at once while setting up: the same as the deposit scenario's connections. */
const CREATE_CONCURRENCY = 32;
const CREATE_TIMEOUT_MS = 30_000;

interface DepositAnswer {
  data?: {
    transactionId?: string;
    status?: string;
    bankCode?: string | null;
    assignedAccount?: { iban?: string };
    requestedAmount?: number;
    currency?: string;
    reference?: string;
    customer?: { name?: string };
  };
  error?: { code?: string; message?: string };
}

/** One merchant-signed POST on the gateway: its status and body. */
function postSigned(gatewayUrl: string, agent: http.Agent, merchant: Merchant, path: string, body: string): Promise<{ status: number; text: string }> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers = {
    "x-api-key": merchant.apiKey,
    "x-timestamp": timestamp,
    "x-signature": sign(merchant.apiSecret, { timestamp, method: "POST", path, body }),
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
  };
  return new Promise((resolve, reject) => {
    const req = http.request(`${gatewayUrl}${path}`, { method: "POST", headers, agent, timeout: CREATE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("timeout", () => req.destroy(new Error(`POST ${path}: no answer within ${CREATE_TIMEOUT_MS / 1000} s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Pending deposits made as the merchants make them: each merchant's signed POST /v1/deposit on
 * the gateway, round-robin over the merchants, 32 at a time (for reads and confirms when the
 * POST scenario made too few; for the bank-report scenarios, on one bank's accounts). Only the
 * gateway speaks for a merchant to the deposit service, and this way no operator audit record is
 * written per deposit. Any answer but 201 fails the call. No new one is started after `deadline`.
 */
export async function createDeposits(product: RunningProduct, merchants: readonly Merchant[], count: number, tag: string, deadline = Infinity, shape: DepositShape = {}): Promise<MadeDeposit[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CREATE_CONCURRENCY });
  try {
    return await inParallel(
      count,
      CREATE_CONCURRENCY,
      async (n) => {
        const merchantIndex = n % merchants.length;
        const merchant = merchants[merchantIndex]!;
        const body = JSON.stringify({
          processId: `${tag}-${merchantIndex}-${n}`,
          amount: Number(shape.amount?.(n) ?? 50_000n),
          ...(shape.bankId ? { bankCode: shape.bankId } : {}),
          customer: { id: `cus_${n}`, name: shape.customerName?.(n) ?? "Ayşe Yılmaz", username: "ayse" },
        });
        const { status, text } = await postSigned(product.gatewayUrl, agent, merchant, "/v1/deposit", body);
        let answer: DepositAnswer = {};
        try {
          answer = JSON.parse(text) as DepositAnswer;
        } catch {
          // Not JSON: reported below with its first characters.
        }
        const d = answer.data;
        if (status !== 201 || !d?.transactionId) throw new Error(`POST /v1/deposit for merchant ${merchant.merchantId} answered ${status}: ${text.slice(0, 300)}`);
        return {
          merchantIndex,
          id: d.transactionId,
          bankId: d.bankCode ?? "",
          status: d.status ?? "",
          iban: d.assignedAccount?.iban ?? "",
          requestedAmount: BigInt(d.requestedAmount ?? 0),
          currency: d.currency ?? "",
          reference: d.reference ?? "",
          customerName: d.customer?.name ?? "",
        };
      },
      deadline,
    );
  } finally {
    agent.destroy();
  }
}
