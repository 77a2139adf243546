import { createPublicKey, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Logger } from "@payments/kit";
import { DEFAULT_TRUST_DOMAIN, ensureLocalWorkloadKeys, generateAssertionKeyPair, loadAssertionPrivateKey, loadTrustBundle, LOCAL_ADMIN_KEY_FILE } from "@payments/access";

/**
 * The merchant service seals API secrets with MASTER_KEY. For a newcomer's `pnpm start`
 * the key is made once and kept beside the data it protects; production sets MASTER_KEY.
 */
export function resolveMasterKey(env: Record<string, string | undefined>, dataDir: string, logger: Logger): string {
  if (env.MASTER_KEY) return env.MASTER_KEY;
  const file = join(dataDir, "master.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString("hex");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  logger.warn({ file }, "MASTER_KEY is not set: generated one for this data directory (set MASTER_KEY in production)");
  return key;
}

/**
 * The services verify operators' assertions against OPERATOR_ASSERTION_PUBLIC_KEY, signed by
 * the console's private key. For a newcomer's `pnpm start` the pair is made once and the private
 * half kept in the data directory (0600), where the CLI on this machine finds it: whoever can
 * read the data directory acts as any operator. Production gives the console its key and the
 * services the public half.
 */
export function resolveOperatorKeys(
  env: Record<string, string | undefined>,
  dataDir: string,
  logger: Logger,
): { OPERATOR_ASSERTION_PUBLIC_KEY: string; OPERATOR_ASSERTION_PRIVATE_KEY?: string } {
  if (env.OPERATOR_ASSERTION_PUBLIC_KEY) {
    return { OPERATOR_ASSERTION_PUBLIC_KEY: env.OPERATOR_ASSERTION_PUBLIC_KEY, ...(env.OPERATOR_ASSERTION_PRIVATE_KEY ? { OPERATOR_ASSERTION_PRIVATE_KEY: env.OPERATOR_ASSERTION_PRIVATE_KEY } : {}) };
  }
  const file = join(dataDir, LOCAL_ADMIN_KEY_FILE);
  let privatePem: string;
  if (existsSync(file)) {
    privatePem = readFileSync(file, "utf8");
  } else {
    mkdirSync(dataDir, { recursive: true });
    privatePem = generateAssertionKeyPair().privateKeyPem;
    writeFileSync(file, privatePem, { mode: 0o600 });
    logger.warn({ file }, "OPERATOR_ASSERTION_PUBLIC_KEY is not set: made a local admin key for this data directory, which `pnpm cli` on this machine signs with");
  }
  const publicPem = createPublicKey(loadAssertionPrivateKey(privatePem)).export({ type: "spki", format: "pem" }).toString();
  return { OPERATOR_ASSERTION_PUBLIC_KEY: publicPem, OPERATOR_ASSERTION_PRIVATE_KEY: privatePem };
}

/**
 * The workload identities of callers from outside this process (the CLI, a bank integration on
 * this machine): their keys are made once in `<DATA_DIR>/workloads` (0600) and the services
 * believe their public halves, merged with any WORKLOAD_TRUST_BUNDLE given. The parts inside the
 * process (gateway, console, services) need no key: their calls never leave it.
 */
export function resolveWorkloadIdentities(env: Record<string, string | undefined>, dataDir: string, logger: Logger): { WORKLOAD_TRUST_BUNDLE: string } {
  const trustDomain = env.WORKLOAD_TRUST_DOMAIN || DEFAULT_TRUST_DOMAIN;
  const { bundle, made, dir } = ensureLocalWorkloadKeys(dataDir, trustDomain);
  if (made.length > 0) logger.info({ dir, keys: made }, "made the workload keys of this machine's callers (the CLI, a bank integration), which `pnpm cli` signs with");
  const given = loadTrustBundle(env.WORKLOAD_TRUST_BUNDLE);
  const merged = given ? given.with(bundle.toJson().keys.map((k) => ({ spiffeId: k.spiffe_id, publicKey: bundle.key(k.kid)!.publicKey }))) : bundle;
  return { WORKLOAD_TRUST_BUNDLE: JSON.stringify(merged.toJson()) };
}
