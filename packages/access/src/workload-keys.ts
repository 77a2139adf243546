import { createPublicKey } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateWorkloadKey, loadWorkloadKey, spiffeId, TrustBundle, type TrustBundleJson } from "./workload-identity.js";

/**
 * Issuing workload keys: a key pair per workload, its private half in a file only that workload
 * reads (0600; a Kubernetes Secret, a compose secret), its public half in the trust bundle every
 * service reads (WORKLOAD_TRUST_BUNDLE). `pnpm cli identity issue` does this for a deployment;
 * the all-in-one does it into its data directory at first start for the callers from outside the
 * process (the CLI, a bank integration on the same machine).
 */
export const LOCAL_WORKLOAD_DIR = "workloads";
export const TRUST_BUNDLE_FILE = "trust-bundle.json";

/** Where a workload's key is kept in a directory of keys: `<dir>/<path with / as _>.key`. */
export function workloadKeyFile(dir: string, path: string): string {
  return join(dir, `${path.replace(/\//g, "_")}.key`);
}

/** The workloads the all-in-one issues keys for at first start: the callers that reach it from outside its process. */
export const LOCAL_OUTSIDE_WORKLOADS = ["cli", "bank-integration"] as const;

export interface IssuedKey {
  spiffeId: string;
  file: string;
  /** Whether this call made it (false: it was there already). */
  made: boolean;
}

/** The key of `path` in `dir`, made (0600) when missing. */
export function ensureWorkloadKey(dir: string, trustDomain: string, path: string): IssuedKey & { privateKeyPem: string } {
  const id = spiffeId(trustDomain, path);
  const file = workloadKeyFile(dir, path);
  if (existsSync(file)) {
    const privateKeyPem = readFileSync(file, "utf8");
    loadWorkloadKey(privateKeyPem);
    return { spiffeId: id, file, made: false, privateKeyPem };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { privateKeyPem } = generateWorkloadKey();
  writeFileSync(file, privateKeyPem, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { spiffeId: id, file, made: true, privateKeyPem };
}

/** The bundle in `file` (an empty one when there is none) with the public halves of `keys` added. */
export function bundleWithKeys(file: string | undefined, keys: ReadonlyArray<{ spiffeId: string; privateKeyPem: string }>): TrustBundle {
  const base = file && existsSync(file) ? TrustBundle.load(file) : TrustBundle.of([]);
  return base.with(keys.map((k) => ({ spiffeId: k.spiffeId, publicKey: createPublicKey(loadWorkloadKey(k.privateKeyPem)) })));
}

export function writeBundle(file: string, bundle: TrustBundle): TrustBundleJson {
  const json = bundle.toJson();
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`, { mode: 0o644 });
  return json;
}

/**
 * The all-in-one's keys for callers from outside its process, in `<dataDir>/workloads`: made at
 * first start, kept (0600) so `pnpm cli` on this machine signs as `cli`, and the trust bundle of
 * their public halves written beside them. Whoever can read the data directory can act as those
 * workloads (as the local admin key lets them act as any operator).
 */
export function ensureLocalWorkloadKeys(dataDir: string, trustDomain: string): { bundle: TrustBundle; made: string[]; dir: string } {
  const dir = join(dataDir, LOCAL_WORKLOAD_DIR);
  const keys = LOCAL_OUTSIDE_WORKLOADS.map((name) => ensureWorkloadKey(dir, trustDomain, name));
  const bundle = bundleWithKeys(undefined, keys);
  writeBundle(join(dir, TRUST_BUNDLE_FILE), bundle);
  return { bundle, made: keys.filter((k) => k.made).map((k) => k.file), dir };
}
