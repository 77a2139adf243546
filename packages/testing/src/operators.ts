import type { KeyObject } from "node:crypto";
import { fromBinary, fromJsonString, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { ApprovalService, type Approval } from "@payments/contracts/operator";
import { speakForMerchant, workloadIdentityInterceptor, type CallerIdentity, type MerchantVoice } from "@payments/access";
import { testMerchantVoice, testWorkload, TEST_WORKLOAD_ENV, type TestWorkload } from "./workloads.js";
import { ERROR_REASON_KEY, errorInfo, createServiceClient as createKitServiceClient, type Clock, type TransportOptions } from "@payments/kit";
import { audienceOfService, createAssertionSigner, generateAssertionKeyPair, loadAssertionPrivateKey, operatorAssertionInterceptor, signAssertion, type AssertionSigner, type ActorIdentity, type MerchantRole, type MerchantUserIdentity, type OperatorIdentity, type OperatorRole } from "@payments/access";

/**
 * The tests' own console key: made once per test process. Services a test starts verify
 * against TEST_OPERATOR_ENV's public key; the clients below sign with its private key.
 */
const pair = generateAssertionKeyPair();
export const TEST_OPERATOR_PRIVATE_KEY_PEM = pair.privateKeyPem;
const privateKey = loadAssertionPrivateKey(pair.privateKeyPem);

/**
 * What a process started by a test needs to believe the harness: the test operators' public key
 * (people's assertions), and the test workloads' trust bundle with every workload's own key
 * (TEST_WORKLOAD_ENV), so it names itself on its calls as the harness names it.
 */
export const TEST_OPERATOR_ENV: Readonly<Record<string, string>> = { OPERATOR_ASSERTION_PUBLIC_KEY: pair.publicKeyPem, ...TEST_WORKLOAD_ENV };

/**
 * Both halves, for an all-in-one a test starts (startAllInOne): its services accept the harness
 * clients' assertions and its console signs with the same key, as `pnpm start`'s does with its
 * local admin key.
 */
export const TEST_OPERATOR_KEYS_ENV: Readonly<Record<string, string>> = { ...TEST_OPERATOR_ENV, OPERATOR_ASSERTION_PRIVATE_KEY: pair.privateKeyPem };

/** The test admin every harness client acts as unless a test says otherwise. */
export const TEST_ADMIN: OperatorIdentity = { subject: "test-admin@example.com", name: "Test Admin", role: "admin", kind: "human" };

/** An operator with one role, for tests of what each role may do. */
export function testOperator(role: OperatorRole, subject = `test-${role}@example.com`): OperatorIdentity {
  return { subject, name: `Test ${role}`, role, kind: "human" };
}

/** A merchant's own user (the merchant dashboard's), whose calls the services scope to `merchantId`. */
export function testMerchantUser(merchantId: string, role: MerchantRole, subject = `${role}@${merchantId}.example.com`): MerchantUserIdentity {
  return { subject, name: `Test ${role} of ${merchantId}`, role, kind: "human", merchantId };
}

export function testSigner(operator: ActorIdentity = TEST_ADMIN, options: { ttlSeconds?: number; now?: () => Date } = {}): AssertionSigner {
  return createAssertionSigner(privateKey, operator, options);
}

/**
 * The clock of the services at each base URL, when a test gave them one (a manual clock): the
 * services verify an assertion's times against their own clock, so the harness clients sign at
 * that time. startInProcess registers its clock here; a test that starts services another way
 * gives the client `clock` itself.
 */
const serviceClocks = new Map<string, Clock>();

function clockKey(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return baseUrl;
  }
}

/** Harness clients of the services at `baseUrl` sign at `clock`'s time, until the returned function is called. */
export function registerServiceClock(baseUrl: string, clock: Clock): () => void {
  const key = clockKey(baseUrl);
  serviceClocks.set(key, clock);
  return () => {
    if (serviceClocks.get(key) === clock) serviceClocks.delete(key);
  };
}

/**
 * A signer for the harness clients: a fresh assertion per call, signed at `now()` (the services'
 * clock, which a test may move either way, so nothing signed earlier is reused).
 */
function clientSigner(operator: ActorIdentity, now: () => Date, key: KeyObject = privateKey): AssertionSigner {
  return { assertionFor: (audience) => signAssertion(key, { ...operator, audience }, now()) };
}

/** The second operator the harness clients ask when a request needs one (four-eyes). */
export const TEST_APPROVER: OperatorIdentity = { subject: "test-approver@example.com", name: "Test Approver", role: "admin", kind: "human" };

export interface TestClientOptions extends TransportOptions {
  /** Who the calls act for: the test admin unless given; null for none (a workload's own call, or the gateway's for `merchant`). */
  operator?: ActorIdentity | null;
  /**
   * Which program the calls come from (its test key signs their workload assertions): the
   * console when a person acts, the gateway when none does, unless given; null for none at all.
   */
  workload?: TestWorkload | CallerIdentity | null;
  /** The merchant the gateway speaks for (its id, with every key scope, or a whole voice): for `operator: null` as the gateway. */
  merchant?: string | MerchantVoice;
  /**
   * Who approves a request that needs a second operator: TEST_APPROVER unless given; null to
   * get APPROVAL_REQUIRED back (the tests of four-eyes itself).
   */
  approver?: ActorIdentity | null;
  /** For the audit and approval services: which hosted service the calls are for. */
  service?: string;
  /** The private key (PEM) the assertions are signed with: the test operators' unless given (a spawned all-in-one's local admin key). */
  signingKey?: string;
  /** The services' clock, which the assertions are signed at: by default the one registered for `baseUrl` (registerServiceClock), else the system's. */
  clock?: Clock;
}

/**
 * A request answered APPROVAL_REQUIRED is approved by `approver` through the service's own
 * ApprovalService (the real four-eyes path: another identity, its role checked, run once by the
 * service), and the call answers what the approved run answered: the stored answer's JSON
 * (secrets in it redacted), or its error with the same code and reason.
 */
function secondOperatorApproves(baseUrl: string, transport: TransportOptions, approver: ActorIdentity, now: () => Date, key: KeyObject): Interceptor {
  return (next) => async (req) => {
    let err: unknown;
    try {
      return await next(req);
    } catch (refused) {
      err = refused;
    }
    const info = errorInfo(err);
    const approvalId = info.details?.approvalId;
    const audience = audienceOfService(req.service.typeName);
    if (info.reason !== "APPROVAL_REQUIRED" || !approvalId || !audience || req.stream) throw err;
    const approvals = createKitServiceClient(ApprovalService, baseUrl, {
      ...transport,
      interceptors: [operatorAssertionInterceptor(clientSigner(approver, now, key), audience), workloadIdentityInterceptor(testWorkload("console", clockAt(now)), { audience })],
    });
    const decided = await approveOrAwait(approvals, approvalId);
    if ("message" in decided) return { stream: false, service: req.service, method: req.method, header: new Headers(), trailer: new Headers(), message: fromJsonString(req.method.output, decided.message) };
    const { approval, answer } = decided;
    if (approval.outcome !== "ok") {
      const failed = JSON.parse(approval.responseJson || "{}") as { code?: string; message?: string };
      const code = (Code as unknown as Record<string, Code | undefined>)[failed.code ?? ""] ?? Code.Unknown;
      throw new ConnectError(failed.message ?? approval.outcome, code, new Headers({ [ERROR_REASON_KEY]: approval.outcome }));
    }
    // The run's own answer (secrets in it, as the approver got them), as the call would have answered.
    return { stream: false, service: req.service, method: req.method, header: new Headers(), trailer: new Headers(), message: fromBinary(req.method.output, answer) };
  };
}

/**
 * Approves `id`; when the same request, asked twice at once by the same person, became one
 * approval that the other call's approver ran already, waits for that run and gives its stored
 * answer (secrets left out), as the second of two identical forms would see.
 */
async function approveOrAwait(approvals: Client<typeof ApprovalService>, id: string): Promise<{ approval: Approval; answer: Uint8Array } | { message: string }> {
  try {
    const { approval, answer } = await approvals.approve({ id, note: "approved by the test harness's second operator" });
    if (!approval) throw new Error("Approve answered no approval");
    return { approval, answer };
  } catch (err) {
    if (errorInfo(err).reason !== "APPROVAL_NOT_PENDING") throw err;
    for (let i = 0; i < 100; i++) {
      const { approval } = await approvals.getApproval({ id });
      if (approval && approval.outcome !== "running" && approval.outcome !== "") {
        if (approval.outcome !== "ok") return { approval, answer: new Uint8Array() };
        return { message: approval.responseJson };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw err;
  }
}

/**
 * kit's createServiceClient, acting for an operator (the test admin unless told): its calls
 * carry the operator's signed assertion, as the console's and the CLI's do, and a request that
 * needs a second operator is approved by one (TEST_APPROVER unless told).
 */
export function createServiceClient<S extends DescService>(service: S, baseUrl: string, options: TestClientOptions = {}): Client<S> {
  const { operator = TEST_ADMIN, approver = TEST_APPROVER, service: hosted, clock, signingKey, workload, merchant, ...transport } = options;
  const now = () => (clock ?? serviceClocks.get(clockKey(baseUrl)))?.now() ?? new Date();
  const caller = workload === null ? undefined : typeof workload === "object" ? workload : testWorkload(workload ?? (operator === null ? "gateway" : "console"), clockAt(now));
  const identity = caller ? [workloadIdentityInterceptor(caller, hosted ? { audience: hosted } : {})] : [];
  const voice = typeof merchant === "string" ? testMerchantVoice(merchant) : merchant;
  const speaking = voice ? [speakingFor(voice)] : [];
  if (operator === null) return createKitServiceClient(service, baseUrl, { ...transport, interceptors: [...speaking, ...identity, ...(transport.interceptors ?? [])] });
  const key = signingKey ? loadAssertionPrivateKey(signingKey) : privateKey;
  const interceptors = [
    ...(approver ? [secondOperatorApproves(baseUrl, transport, approver, now, key)] : []),
    operatorAssertionInterceptor(clientSigner(operator, now, key), hosted),
    ...identity,
    ...(transport.interceptors ?? []),
  ];
  return createKitServiceClient(service, baseUrl, { ...transport, interceptors });
}

/** A clock reading `now` (the harness signs workload assertions at the services' time, as it signs people's). */
function clockAt(now: () => Date): Clock {
  return { now };
}

/** Every call in it speaks for `voice`, as the gateway's calls inside a merchant's request do. */
function speakingFor(voice: MerchantVoice): Interceptor {
  return (next) => (req) => speakForMerchant(voice, () => next(req));
}
