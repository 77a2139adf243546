import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { type Env, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { Knex } from "knex";
import { createCallbackModule, type CallbackModuleOptions } from "../src/index.js";

// What the callback-sender tests share: the services that produce status changes (on MySQL,
// events over JetStream) and callback-sender replicas on their own database. The merchant's
// endpoint is @payments/testing's CallbackReceiver, a real HTTP receiver on localhost.

export const INTERNAL_TOKEN = "callback-tests-internal-token";

/** The settings every test sender gets: a fast schedule and loopback allowed. */
export const FAST_SENDER: Env = {
  CALLBACK_RETRY_SCHEDULE: "100ms,200ms,300ms",
  CALLBACK_TIMEOUT: "2s",
  CALLBACK_CLAIM_TIMEOUT: "3s",
  CALLBACK_POLL_INTERVAL: "50ms",
  CALLBACK_ALLOW_PRIVATE: "1",
  PUBLIC_BASE_URL: "https://pay.example.test",
};

/**
 * The producers (merchant, bank-catalog, deposit, payout in one process on MySQL, events
 * over a JetStream stream of their own) and a database for callback-sender replicas.
 */
export class Stack {
  /** Unset until start() has them running; stop() runs even when start() failed before that. */
  private started: RunningServices | undefined;
  get producers(): RunningServices {
    if (!this.started) throw new Error("the producers did not start");
    return this.started;
  }
  readonly senders: RunningServices[] = [];
  private readonly js: ReturnType<typeof jetStreamTestEnv>;

  /** `natsUrl`: a NATS server of the test's own (one it restarts); default the local one. */
  constructor(options: { natsUrl?: string } = {}) {
    const js = jetStreamTestEnv();
    this.js = options.natsUrl ? { ...js, NATS_URL: options.natsUrl } : js;
  }
  private readonly databases: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
  senderDatabaseUrl!: string;

  async start(producerEnv: Env = {}): Promise<this> {
    const [producersDb, senderDb] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    this.databases.push(producersDb, senderDb);
    this.senderDatabaseUrl = senderDb.url;
    this.started = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
      env: {
        ...this.js,
        DATABASE_URL: producersDb.url,
        INTERNAL_API_TOKEN: INTERNAL_TOKEN,
        MASTER_KEY: "b".repeat(64),
        LOG_LEVEL: "error",
        SANDBOX_PAYOUT_DELAY: "20ms",
        PAYOUT_WORKER_INTERVAL: "100ms",
        DEPOSIT_EXPIRY_INTERVAL: "100ms",
        // The merchant service refuses loopback callback URLs when they are set, as the sender does when it calls.
        CALLBACK_ALLOW_PRIVATE: "1",
        ...producerEnv,
      },
      receivingAccounts: true,
    });
    return this;
  }

  /** One callback-sender replica, split mode, on the senders' database. */
  async startSender(env: Env = {}, options: CallbackModuleOptions = {}): Promise<RunningServices> {
    const sender = await startServices([createCallbackModule(options)], { mode: "split", env: this.senderEnv(env) });
    this.senders.push(sender);
    return sender;
  }

  /** The environment of a sender replica (also for one in a child process). */
  senderEnv(env: Env = {}): Env {
    return {
      ...TEST_OPERATOR_ENV,
      ...this.js,
      DATABASE_URL: this.senderDatabaseUrl,
      GRPC_PORT: "0",
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      MERCHANT_SERVICE_URL: this.producers.server.url,
      LOG_LEVEL: "error",
      ...FAST_SENDER,
      ...TEST_OPERATOR_ENV,
      ...env,
    };
  }

  async stopSender(sender: RunningServices): Promise<void> {
    await sender.stop();
    this.senders.splice(this.senders.indexOf(sender), 1);
  }

  senderDb(sender: RunningServices = this.senders[0]!): Knex {
    return sender.contexts.get("callback-sender")!.db;
  }

  merchants() {
    return createServiceClient(MerchantService, this.producers.server.url, { token: INTERNAL_TOKEN });
  }
  deposits() {
    return createServiceClient(DepositService, this.producers.server.url, { token: INTERNAL_TOKEN });
  }
  payouts() {
    return createServiceClient(PayoutService, this.producers.server.url, { token: INTERNAL_TOKEN });
  }
  callbacks(sender: RunningServices = this.senders[0]!) {
    return createServiceClient(CallbackService, sender.server.url, { token: INTERNAL_TOKEN });
  }

  /** A merchant whose callbacks go to `callbackUrl`, with its secret. */
  async merchant(callbackUrl: string, name = "Callback Shop"): Promise<{ id: string; secret: string }> {
    const created = await this.merchants().createMerchant({ name, callbackUrl, sandbox: true });
    return { id: created.merchant!.id, secret: created.apiSecret };
  }

  /** A pending deposit of the merchant. */
  async deposit(merchantId: string, processId: string, amount = 10_000n) {
    const { deposit } = await this.deposits().createDeposit({
      merchantId,
      processId,
      amount,
      customer: { id: "cust-1", name: "Ayşe Yılmaz", username: "ayse" },
    });
    return deposit!;
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.senders.splice(0).map((s) => s.stop()));
    await this.started?.stop();
    await Promise.allSettled(this.databases.map((d) => d.drop()));
    await deleteTestStream(this.js).catch(() => undefined);
  }
}
