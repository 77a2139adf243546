import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import {
  createAssertionSigner,
  createServiceClient as createKitServiceClient,
  generateAssertionKeyPair,
  loadAssertionPrivateKey,
  operatorAssertionInterceptor,
  type AssertionSigner,
  type OperatorIdentity,
  type OperatorRole,
  type TransportOptions,
} from "@payments/kit";

/**
 * The tests' own console key: made once per test process. Services a test starts verify
 * against TEST_OPERATOR_ENV's public key; the clients below sign with its private key.
 */
const pair = generateAssertionKeyPair();
export const TEST_OPERATOR_PRIVATE_KEY_PEM = pair.privateKeyPem;
const privateKey = loadAssertionPrivateKey(pair.privateKeyPem);

/** What a service started by a test needs to accept the test operators' assertions. */
export const TEST_OPERATOR_ENV: Readonly<Record<string, string>> = { OPERATOR_ASSERTION_PUBLIC_KEY: pair.publicKeyPem };

/** The test admin every harness client acts as unless a test says otherwise. */
export const TEST_ADMIN: OperatorIdentity = { subject: "test-admin@example.com", name: "Test Admin", role: "admin", kind: "human" };

/** An operator with one role, for tests of what each role may do. */
export function testOperator(role: OperatorRole, subject = `test-${role}@example.com`): OperatorIdentity {
  return { subject, name: `Test ${role}`, role, kind: "human" };
}

export function testSigner(operator: OperatorIdentity = TEST_ADMIN, options: { ttlSeconds?: number; now?: () => Date } = {}): AssertionSigner {
  return createAssertionSigner(privateKey, operator, options);
}

export interface TestClientOptions extends TransportOptions {
  /** Who the calls act for: the test admin unless given; null for none (a trusted internal caller, like the gateway). */
  operator?: OperatorIdentity | null;
  /** For the audit and approval services: which hosted service the calls are for. */
  service?: string;
}

/**
 * kit's createServiceClient, acting for an operator (the test admin unless told): its calls
 * carry the operator's signed assertion, as the console's and the CLI's do.
 */
export function createServiceClient<S extends DescService>(service: S, baseUrl: string, options: TestClientOptions = {}): Client<S> {
  const { operator = TEST_ADMIN, service: hosted, ...transport } = options;
  if (operator === null) return createKitServiceClient(service, baseUrl, transport);
  return createKitServiceClient(service, baseUrl, { ...transport, interceptors: [operatorAssertionInterceptor(testSigner(operator), hosted), ...(transport.interceptors ?? [])] });
}
