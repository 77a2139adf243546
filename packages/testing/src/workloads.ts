import { createPublicKey } from "node:crypto";
import {
  API_KEY_SCOPES,
  createWorkloadSigner,
  DEFAULT_TRUST_DOMAIN,
  generateWorkloadKey,
  loadWorkloadKey,
  signedIdentity,
  spiffeId,
  TrustBundle,
  WORKLOAD_NAMES,
  workloadKeyVariable,
  type CallerIdentity,
  type MerchantVoice,
  type WorkloadSigner,
} from "@payments/access";
import { systemClock, type Clock } from "@payments/kit";

/**
 * The tests' own workload keys, made once per test process: one for every workload the tables
 * name (and a bank integration with a path of its own). Services a test starts believe their
 * public halves (TEST_WORKLOAD_ENV's trust bundle); the harness clients sign with the private
 * halves as whichever workload a test plays, and each started process finds its own in
 * WORKLOAD_KEY_<NAME>.
 */
const PATHS = [...WORKLOAD_NAMES, "bank-integration/test-bank"] as const;
export type TestWorkload = (typeof PATHS)[number];

const keys = new Map<string, string>(PATHS.map((path) => [path, generateWorkloadKey().privateKeyPem]));

/** A test workload's private key (PEM). */
export function testWorkloadKeyPem(path: TestWorkload): string {
  return keys.get(path)!;
}

export const TEST_TRUST_BUNDLE = TrustBundle.of(PATHS.map((path) => ({ spiffeId: spiffeId(DEFAULT_TRUST_DOMAIN, path), publicKey: createPublicKey(loadWorkloadKey(keys.get(path)!)) })));

/**
 * What a process started by a test needs to believe the harness and to name itself: the trust
 * bundle of every test workload, and every workload's key under WORKLOAD_KEY_<NAME> (a service
 * hosted alone takes its own; the gateway, the console and the CLI theirs).
 */
export const TEST_WORKLOAD_ENV: Readonly<Record<string, string>> = {
  WORKLOAD_TRUST_BUNDLE: JSON.stringify(TEST_TRUST_BUNDLE.toJson()),
  ...Object.fromEntries(WORKLOAD_NAMES.map((name) => [workloadKeyVariable(name), keys.get(name)!])),
};

/** A second trust domain's keys for the same names: what another deployment's workloads would present. */
export function foreignWorkloadSigner(path: string, clock: Clock = systemClock, trustDomain = "other.example"): WorkloadSigner {
  return createWorkloadSigner(spiffeId(trustDomain, path), loadWorkloadKey(generateWorkloadKey().privateKeyPem), clock);
}

const signers = new Map<string, WorkloadSigner>();

/** The signer of a test workload at `clock` (the services' clock: they check the times at theirs). */
export function testWorkloadSigner(path: TestWorkload, clock: Clock = systemClock): WorkloadSigner {
  if (clock !== systemClock) return createWorkloadSigner(spiffeId(DEFAULT_TRUST_DOMAIN, path), loadWorkloadKey(keys.get(path)!), clock);
  let signer = signers.get(path);
  if (!signer) {
    signer = createWorkloadSigner(spiffeId(DEFAULT_TRUST_DOMAIN, path), loadWorkloadKey(keys.get(path)!), clock);
    signers.set(path, signer);
  }
  return signer;
}

export function testWorkload(path: TestWorkload, clock?: Clock): CallerIdentity {
  return signedIdentity(testWorkloadSigner(path, clock));
}

/** The gateway's voice for a merchant, as it speaks after verifying a request signed with the merchant's key (every scope unless told). */
export function testMerchantVoice(merchantId: string, options: Partial<Omit<MerchantVoice, "merchantId">> = {}): MerchantVoice {
  return { merchantId, keyId: options.keyId ?? `pk_test_${merchantId}`, scopes: options.scopes ?? API_KEY_SCOPES, trusted: options.trusted ?? false };
}
