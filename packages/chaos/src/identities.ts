import { createPublicKey } from "node:crypto";
import { fromJsonString, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { ApprovalService } from "@payments/contracts/operator";
import {
  audienceOfService,
  createAssertionSigner,
  createWorkloadSigner,
  DEFAULT_TRUST_DOMAIN,
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
import { createServiceClient, ERROR_REASON_KEY, errorInfo, systemClock, type TransportOptions } from "@payments/kit";

/**
 * The run's workload identities (README, "Workload identities"): an Ed25519 key of the run's own
 * for every workload it starts or plays, and the trust bundle of their public halves that every
 * process it starts believes. Made afresh for each run, never written to disk: a key of one run
 * is worth nothing in the next.
 */
export class RunWorkloads {
  private readonly keys = new Map<string, string>();
  private readonly callers = new Map<string, CallerIdentity>();
  readonly bundle: TrustBundle;
  /** WORKLOAD_TRUST_BUNDLE's JSON. */
  readonly bundleJson: string;

  constructor(
    paths: readonly string[],
    readonly trustDomain: string = DEFAULT_TRUST_DOMAIN,
  ) {
    for (const path of paths) this.keys.set(path, generateWorkloadKey().privateKeyPem);
    this.bundle = TrustBundle.of([...this.keys].map(([path, pem]) => ({ spiffeId: spiffeId(trustDomain, path), publicKey: createPublicKey(loadWorkloadKey(pem)) })));
    this.bundleJson = JSON.stringify(this.bundle.toJson());
  }

  /** The private key (PEM) of workload `path`. */
  keyOf(path: string): string {
    const key = this.keys.get(path);
    if (!key) throw new Error(`the run made no key for workload ${path}`);
    return key;
  }

  /**
   * What a process that is workload `path` is given: its own key (WORKLOAD_KEY, whose SPIFFE ID
   * defaults to `spiffe://<domain>/<its deployable's name>`, or `WORKLOAD_ID` when the path is
   * not that name), the bundle, the trust domain.
   */
  envOf(path: string, options: { id?: boolean } = {}): Record<string, string> {
    return {
      WORKLOAD_KEY: this.keyOf(path),
      WORKLOAD_TRUST_BUNDLE: this.bundleJson,
      WORKLOAD_TRUST_DOMAIN: this.trustDomain,
      ...(options.id ? { WORKLOAD_ID: spiffeId(this.trustDomain, path) } : {}),
    };
  }

  /** The harness signing as workload `path` on its own calls (one assertion per audience, renewed before it ends). */
  caller(path: string): CallerIdentity {
    let caller = this.callers.get(path);
    if (!caller) {
      caller = signedIdentity(createWorkloadSigner(spiffeId(this.trustDomain, path), loadWorkloadKey(this.keyOf(path)), systemClock));
      this.callers.set(path, caller);
    }
    return caller;
  }
}

/** A signer of `operator`'s assertions with the run's operator key: a read reuses one per service for most of its minute, a change gets one of its own. */
export function operatorSigner(privateKeyPem: string, operator: OperatorIdentity): AssertionSigner {
  return createAssertionSigner(loadAssertionPrivateKey(privateKeyPem), operator);
}

export interface ClientIdentity {
  /** The workload the calls come from (signed with its key). */
  caller: CallerIdentity;
  /** The person they act for (an operator's assertion on every call), carried by `caller`; none for a workload's own calls. */
  operator?: AssertionSigner;
  /** Who approves, through the service's ApprovalService, a request the service keeps for a second operator. */
  approver?: AssertionSigner;
}

/**
 * A client of one internal service as `identity`: its workload assertion on every call, the
 * operator's assertion when one acts (fresh for a change, as operatorAssertionInterceptor asks),
 * and, when a request answers APPROVAL_REQUIRED, the approver's approval through the service's
 * ApprovalService, the call answering what the approved run answered.
 */
export function serviceClient<S extends DescService>(service: S, baseUrl: string, transport: TransportOptions, identity: ClientIdentity): Client<S> {
  const interceptors: Interceptor[] = [
    ...(identity.approver ? [secondOperatorApproves(baseUrl, transport, identity.approver, identity.caller)] : []),
    ...(identity.operator ? [operatorAssertionInterceptor(identity.operator)] : []),
    workloadIdentityInterceptor(identity.caller),
    ...(transport.interceptors ?? []),
  ];
  return createServiceClient(service, baseUrl, { ...transport, interceptors });
}

function secondOperatorApproves(baseUrl: string, transport: TransportOptions, approver: AssertionSigner, caller: CallerIdentity): Interceptor {
  return (next) => async (req) => {
    let refused: unknown;
    try {
      return await next(req);
    } catch (err) {
      refused = err;
    }
    const info = errorInfo(refused);
    const approvalId = info.details?.approvalId;
    const audience = audienceOfService(req.service.typeName);
    if (info.reason !== "APPROVAL_REQUIRED" || !approvalId || !audience || req.stream) throw refused;
    const approvals = createServiceClient(ApprovalService, baseUrl, {
      ...transport,
      interceptors: [operatorAssertionInterceptor(approver, audience), workloadIdentityInterceptor(caller, { audience })],
    });
    const { approval } = await approvals.approve({ id: approvalId, note: "approved by the chaos run's second operator" });
    if (!approval) throw new Error("Approve answered no approval");
    if (approval.outcome !== "ok") {
      const failed = JSON.parse(approval.responseJson || "{}") as { code?: string; message?: string };
      const code = (Code as unknown as Record<string, Code | undefined>)[failed.code ?? ""] ?? Code.Unknown;
      throw new ConnectError(failed.message ?? approval.outcome, code, new Headers({ [ERROR_REASON_KEY]: approval.outcome }));
    }
    return { stream: false, service: req.service, method: req.method, header: new Headers(), trailer: new Headers(), message: fromJsonString(req.method.output, approval.responseJson) };
  };
}
