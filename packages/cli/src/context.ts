import type { Command } from "commander";
import {
  approvalClient,
  auditClient,
  bankCatalogClient,
  callbackClient,
  depositClient,
  merchantClient,
  payoutClient,
  resolveEndpoints,
  type ApprovalClient,
  type AuditClient,
  type BankCatalogClient,
  type ServiceName,
  type CallbackClient,
  type DepositClient,
  type Endpoints,
  type MerchantClient,
  type PayoutClient,
} from "./clients.js";
import type { Io } from "./io.js";
import { Output } from "./output.js";

/** Options of the program itself, accepted before or after the command. */
export interface GlobalOptions {
  grpcUrl?: string;
  json?: boolean;
  /** A command's --actor (optsWithGlobals brings it along): who a locally signed assertion names. */
  actor?: string;
}

/** What one command invocation works with: its output and, built on first use, its clients. */
export class Session {
  readonly out: Output;
  private endpointsCache: Endpoints | undefined;
  private merchantsCache: MerchantClient | undefined;
  private bankCatalogCache: BankCatalogClient | undefined;
  private depositsCache: DepositClient | undefined;
  private payoutsCache: PayoutClient | undefined;
  private callbacksCache: CallbackClient | undefined;

  constructor(
    readonly io: Io,
    readonly options: GlobalOptions,
  ) {
    this.out = new Output(io, options.json === true);
  }

  private get endpoints(): Endpoints {
    this.endpointsCache ??= resolveEndpoints(this.options, this.io.env);
    return this.endpointsCache;
  }

  get merchants(): MerchantClient {
    this.merchantsCache ??= merchantClient(this.endpoints);
    return this.merchantsCache;
  }

  get bankCatalog(): BankCatalogClient {
    this.bankCatalogCache ??= bankCatalogClient(this.endpoints);
    return this.bankCatalogCache;
  }

  get deposits(): DepositClient {
    this.depositsCache ??= depositClient(this.endpoints);
    return this.depositsCache;
  }

  get payouts(): PayoutClient {
    this.payoutsCache ??= payoutClient(this.endpoints);
    return this.payoutsCache;
  }

  get callbacks(): CallbackClient {
    this.callbacksCache ??= callbackClient(this.endpoints);
    return this.callbacksCache;
  }

  /** The approvals waiting in one service. */
  approvals(service: ServiceName): ApprovalClient {
    return approvalClient(this.endpoints, service);
  }

  /** One service's audit. */
  audit(service: ServiceName): AuditClient {
    return auditClient(this.endpoints, service);
  }
}

/** Handed to every command group: opens a session for the command being run. */
export class CommandContext {
  constructor(readonly io: Io) {}

  session(command: Command): Session {
    return new Session(this.io, command.optsWithGlobals<GlobalOptions>());
  }
}
