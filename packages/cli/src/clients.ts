import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { ApprovalService, AuditService } from "@payments/contracts/operator";
import { ConfigError, createServiceClient, ERROR_REASON_KEY, loadClientTls, type ClientTlsOptions } from "@payments/kit";
import { operatorAssertionInterceptor, workloadIdentityInterceptor, type AssertionSigner, type CallerIdentity } from "@payments/access";
import { carriesPeople, operatorSigner, workloadIdentity } from "./operator-signer.js";
import { CommandFailed, UnreachableError, UsageError } from "./errors.js";
import { localGrpcUrl } from "./local-addresses.js";

/** Where `pnpm start` serves every internal service unless GRPC_PORT says otherwise. */
export const DEFAULT_GRPC_URL = "http://127.0.0.1:9090";
const CALL_TIMEOUT_MS = 10_000;

export interface Endpoints {
  merchant: string;
  bankCatalog: string;
  deposit: string;
  payout: string;
  callbackSender: string;
  /** INTERNAL_API_TOKEN, sent as a bearer token when set. */
  token?: string;
  /** INTERNAL_TLS_CA / INTERNAL_TLS_CERT / INTERNAL_TLS_KEY, for https:// service URLs. */
  tls?: ClientTlsOptions;
  /** Who the calls act for (operatorSigner): each call carries this operator's signed assertion. */
  signer?: AssertionSigner;
  /** Which program calls (workloadIdentity): every call carries it, or the services refuse it. */
  identity?: CallerIdentity;
}

function checkedUrl(url: string, source: string): string {
  const trimmed = url.trim();
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw new UsageError(`${source} must be an http:// or https:// URL, got "${url}"`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`${source} must be an http:// or https:// URL, got "${url}"`);
  return trimmed.replace(/\/+$/, "");
}

/** The INTERNAL_TLS_* files, read and checked now; a bad one is a usage error naming the variable. */
function clientTls(env: Readonly<Record<string, string | undefined>>): ClientTlsOptions | undefined {
  try {
    return loadClientTls({ ...env });
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message.replace(/^invalid configuration:\n\s*/, "").replace(/\n\s*/g, "; "));
    throw err;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value : undefined;
}

/**
 * --grpc-url (typed now, so it wins) > MERCHANT_SERVICE_URL / BANK_CATALOG_SERVICE_URL /
 * DEPOSIT_SERVICE_URL / PAYOUT_SERVICE_URL / CALLBACK_SENDER_SERVICE_URL (split deployments) >
 * GRPC_URL > the all-in-one's address: 127.0.0.1 on GRPC_PORT (its setting, 9090 unless set).
 */
export function resolveEndpoints(flags: { grpcUrl?: string; actor?: string }, env: Readonly<Record<string, string | undefined>>): Endpoints {
  const pick = (variable: string): string => {
    if (flags.grpcUrl !== undefined) return checkedUrl(flags.grpcUrl, "--grpc-url");
    const specific = nonEmpty(env[variable]);
    if (specific) return checkedUrl(specific, variable);
    const shared = nonEmpty(env.GRPC_URL);
    if (shared) return checkedUrl(shared, "GRPC_URL");
    return localGrpcUrl(env);
  };
  const endpoints: Endpoints = {
    merchant: pick("MERCHANT_SERVICE_URL"),
    bankCatalog: pick("BANK_CATALOG_SERVICE_URL"),
    deposit: pick("DEPOSIT_SERVICE_URL"),
    payout: pick("PAYOUT_SERVICE_URL"),
    callbackSender: pick("CALLBACK_SENDER_SERVICE_URL"),
    token: nonEmpty(env.INTERNAL_API_TOKEN),
    tls: clientTls(env),
  };
  const identity = workloadIdentity(env);
  // A person rides only on a workload that carries people (the CLI itself); a bank integration's key calls as the integration alone.
  const signer = !identity || carriesPeople(identity) ? operatorSigner(flags.actor, env) : undefined;
  return { ...endpoints, ...(signer ? { signer } : {}), ...(identity ? { identity } : {}) };
}

/** What OpenSSL and Node say when a TLS handshake fails: untrusted server, missing or refused client certificate, TLS against cleartext. */
const TLS_FAILURE = /SSL routines|alert|certificate|ERR_TLS|wrong version number/i;

/** Turns "nothing is listening there" (or "the TLS handshake failed") into an error that names the URL and how to fix it. */
function reportUnreachable(url: string): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const connectError = ConnectError.from(err);
      // A service's own errors carry a reason; a transport failure does not.
      if (!connectError.metadata.get(ERROR_REASON_KEY) && TLS_FAILURE.test(connectError.rawMessage)) {
        throw new CommandFailed(`TLS with ${url} failed — check INTERNAL_TLS_CA, INTERNAL_TLS_CERT and INTERNAL_TLS_KEY (${connectError.rawMessage})`);
      }
      if (connectError.code === Code.Unavailable && !connectError.metadata.get(ERROR_REASON_KEY)) {
        throw new UnreachableError(url, connectError.rawMessage);
      }
      throw err;
    }
  };
}

export type MerchantClient = Client<typeof MerchantService>;
export type BankCatalogClient = Client<typeof BankCatalogService>;
export type DepositClient = Client<typeof DepositService>;
export type PayoutClient = Client<typeof PayoutService>;
export type CallbackClient = Client<typeof CallbackService>;

/** A client of one internal service at `url`: the internal token, the CLI's deadline, and an unreachable URL named in the error. */
function serviceClient<S extends DescService>(service: S, url: string, endpoints: Endpoints, hosted?: string): Client<S> {
  const interceptors = [
    reportUnreachable(url),
    ...(endpoints.signer ? [operatorAssertionInterceptor(endpoints.signer, hosted)] : []),
    ...(endpoints.identity ? [workloadIdentityInterceptor(endpoints.identity, hosted ? { audience: hosted } : {})] : []),
  ];
  return createServiceClient(service, url, { token: endpoints.token, tls: endpoints.tls, timeoutMs: CALL_TIMEOUT_MS, interceptors });
}

/** The internal services by the names they call themselves, with the setting that points at each. */
export const SERVICES = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"] as const;
export type ServiceName = (typeof SERVICES)[number];

function urlOf(endpoints: Endpoints, name: ServiceName): string {
  switch (name) {
    case "merchant":
      return endpoints.merchant;
    case "bank-catalog":
      return endpoints.bankCatalog;
    case "deposit":
      return endpoints.deposit;
    case "payout":
      return endpoints.payout;
    case "callback-sender":
      return endpoints.callbackSender;
  }
}

export type ApprovalClient = Client<typeof ApprovalService>;
export type AuditClient = Client<typeof AuditService>;

/** The approvals waiting in one service. */
export const approvalClient = (endpoints: Endpoints, name: ServiceName): ApprovalClient => serviceClient(ApprovalService, urlOf(endpoints, name), endpoints, name);
/** The audit of one service. */
export const auditClient = (endpoints: Endpoints, name: ServiceName): AuditClient => serviceClient(AuditService, urlOf(endpoints, name), endpoints, name);

export const merchantClient = (endpoints: Endpoints): MerchantClient => serviceClient(MerchantService, endpoints.merchant, endpoints);
export const bankCatalogClient = (endpoints: Endpoints): BankCatalogClient => serviceClient(BankCatalogService, endpoints.bankCatalog, endpoints);
export const depositClient = (endpoints: Endpoints): DepositClient => serviceClient(DepositService, endpoints.deposit, endpoints);
export const payoutClient = (endpoints: Endpoints): PayoutClient => serviceClient(PayoutService, endpoints.payout, endpoints);
export const callbackClient = (endpoints: Endpoints): CallbackClient => serviceClient(CallbackService, endpoints.callbackSender, endpoints);
