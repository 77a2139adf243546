import { createPublicKey } from "node:crypto";
import type { DescService } from "@bufbuild/protobuf";
import type { Client, Interceptor } from "@connectrpc/connect";
import {
  createAssertionSigner,
  createWorkloadSigner,
  DEFAULT_TRUST_DOMAIN,
  generateAssertionKeyPair,
  generateWorkloadKey,
  loadAssertionPrivateKey,
  loadWorkloadKey,
  operatorAssertionInterceptor,
  signedIdentity,
  spiffeId,
  TrustBundle,
  workloadIdentityInterceptor,
  type AssertionSigner,
  type CallerIdentity,
  type OperatorIdentity,
} from "@payments/access";
import { createServiceClient, systemClock, type TransportOptions } from "@payments/kit";

/**
 * Who the bench is to the product it measures (README, "Workload identities", and "Operators,
 * roles and approvals"): workloads of its own, each with an Ed25519 key of the run's own (none
 * a service's), and an operator key pair of the run's own.
 *
 * - `bench` carries the bench's operator (an admin service account) on every call that sets the
 *   product up or reads it back: merchants, funding, banks and accounts, confirms, lists;
 * - `bank-integration/bench` reports transfers (ReportTransfer) for itself, as a bank integration
 *   does, with no person behind the call.
 */
export const BENCH_WORKLOADS = ["bench", "bank-integration/bench"] as const;

/** The bench's operator: an admin service account, whose assertions the product's services verify. */
export const BENCH_OPERATOR: OperatorIdentity = { subject: "bench@localhost", name: "pnpm bench", role: "admin", kind: "service" };

/**
 * Workload keys made for one run, never written to disk: one per path, and the trust bundle of
 * their public halves (WORKLOAD_TRUST_BUNDLE) that every process the run starts believes.
 */
export class RunWorkloads {
  private readonly keys = new Map<string, string>();
  private readonly callers = new Map<string, CallerIdentity>();
  readonly bundleJson: string;

  constructor(
    paths: readonly string[],
    readonly trustDomain: string = DEFAULT_TRUST_DOMAIN,
  ) {
    for (const path of paths) this.keys.set(path, generateWorkloadKey().privateKeyPem);
    const bundle = TrustBundle.of([...this.keys].map(([path, pem]) => ({ spiffeId: spiffeId(trustDomain, path), publicKey: createPublicKey(loadWorkloadKey(pem)) })));
    this.bundleJson = JSON.stringify(bundle.toJson());
  }

  keyOf(path: string): string {
    const key = this.keys.get(path);
    if (!key) throw new Error(`the run made no key for workload ${path}`);
    return key;
  }

  /** The bundle, for a process that only believes (the all-in-one, whose own parts call each other in process). */
  trustEnv(): Record<string, string> {
    return { WORKLOAD_TRUST_BUNDLE: this.bundleJson, WORKLOAD_TRUST_DOMAIN: this.trustDomain };
  }

  /** What a process that is workload `path` (a service, the gateway) is given: its own key (its SPIFFE ID is its deployable's name) and the bundle. */
  envOf(path: string): Record<string, string> {
    return { ...this.trustEnv(), WORKLOAD_KEY: this.keyOf(path) };
  }

  /** The bench signing as workload `path` (one workload assertion per audience, renewed before it ends). */
  caller(path: string): CallerIdentity {
    let caller = this.callers.get(path);
    if (!caller) {
      caller = signedIdentity(createWorkloadSigner(spiffeId(this.trustDomain, path), loadWorkloadKey(this.keyOf(path)), systemClock));
      this.callers.set(path, caller);
    }
    return caller;
  }
}

export interface BenchIdentities {
  /** What the product's services need to verify the bench's operator (its public half). */
  operatorEnv: { OPERATOR_ASSERTION_PUBLIC_KEY: string };
  /** The operator key's private half (PKCS#8 PEM): the all-in-one's console signs with it when the bench starts one. */
  operatorKeyPem: string;
  /** BENCH_OPERATOR's assertions: a read reuses one per service for most of its minute, a change gets one of its own (operatorAssertionInterceptor asks). */
  operator: AssertionSigner;
  workloads: RunWorkloads;
}

/** The run's operator key pair and workload keys: the bench's own (BENCH_WORKLOADS) and one for each of `processes` (the split's services and gateway). */
export function benchIdentities(processes: readonly string[] = []): BenchIdentities {
  const { privateKeyPem, publicKeyPem } = generateAssertionKeyPair();
  return {
    operatorEnv: { OPERATOR_ASSERTION_PUBLIC_KEY: publicKeyPem },
    operatorKeyPem: privateKeyPem,
    operator: createAssertionSigner(loadAssertionPrivateKey(privateKeyPem), BENCH_OPERATOR),
    workloads: new RunWorkloads([...BENCH_WORKLOADS, ...processes]),
  };
}

/** The interceptors of a call the bench's operator makes, carried by the workload `bench` (`hosted`: the service an audit or approval call is for). */
export function operatorCallInterceptors(identities: BenchIdentities, hosted?: string): Interceptor[] {
  return [operatorAssertionInterceptor(identities.operator, hosted), workloadIdentityInterceptor(identities.workloads.caller("bench"), hosted ? { audience: hosted } : {})];
}

/** A client of one internal service as the bench's operator (workload `bench`). */
export function operatorClient<S extends DescService>(service: S, url: string, transport: TransportOptions, identities: BenchIdentities, hosted?: string): Client<S> {
  return createServiceClient(service, url, { ...transport, interceptors: [...operatorCallInterceptors(identities, hosted), ...(transport.interceptors ?? [])] });
}

/** A client of one internal service as workload `path` calling for itself (no person). */
export function workloadClient<S extends DescService>(service: S, url: string, transport: TransportOptions, identities: BenchIdentities, path: (typeof BENCH_WORKLOADS)[number]): Client<S> {
  return createServiceClient(service, url, { ...transport, interceptors: [workloadIdentityInterceptor(identities.workloads.caller(path)), ...(transport.interceptors ?? [])] });
}
