import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  createAssertionSigner,
  isOperatorRole,
  isWorkload,
  loadAssertionPrivateKey,
  LOCAL_ADMIN_KEY_FILE,
  LOCAL_WORKLOAD_DIR,
  OPERATOR_CARRIERS,
  parseSpiffeId,
  signedIdentity,
  workloadKeyFile,
  workloadKeyVariable,
  workloadNameOf,
  workloadSignerFromEnv,
  type AssertionSigner,
  type CallerIdentity,
} from "@payments/access";
import { ConfigError, systemClock } from "@payments/kit";
import { UsageError } from "./errors.js";
import { adminCredential, consoleAssertionSigner, consoleUrl, exchangingSigner } from "./console-session.js";
import { operatorName } from "./operator.js";


/** The console's own audience: its admin API accepts an admin assertion for it. */
const CONSOLE_AUDIENCE = "console";

/**
 * Who the CLI acts as, proven to the services by a signed assertion on every call, from the
 * first of:
 * 1. PAYMENTS_OPERATOR_TOKEN: a service account's token (`pnpm cli operator token`);
 * 2. OPERATOR_ASSERTION_PRIVATE_KEY: the console's own key, for whoever holds it (bootstrap,
 *    automation next to the console): signs as --actor / PAYMENTS_OPERATOR / the OS user, with
 *    PAYMENTS_OPERATOR_ROLE (admin unless set);
 * 3. the session `pnpm cli login` cached: the console signs each assertion for the operator
 *    who signed in, with the role their account has now;
 * 4. the all-in-one's local admin key, `<DATA_DIR>/operator-admin.key` (`./var` unless DATA_DIR
 *    says otherwise), the same way: on one machine, whoever can read the data directory is
 *    every operator.
 * undefined without any: calls that need an operator are refused (UNAUTHENTICATED).
 */
export function operatorSigner(actor: string | undefined, env: Readonly<Record<string, string | undefined>>): AssertionSigner | undefined {
  const token = env.PAYMENTS_OPERATOR_TOKEN?.trim();
  // A service account's token is for the console, which signs a 60-second assertion per call for it.
  if (token) return exchangingSigner(consoleUrl(env), token);
  const explicit = env.OPERATOR_ASSERTION_PRIVATE_KEY?.trim();
  if (!explicit) {
    const signedIn = consoleAssertionSigner(env);
    if (signedIn) return signedIn;
  }
  const keyText = explicit || localAdminKey(env);
  if (!keyText) return undefined;
  let key;
  try {
    key = loadAssertionPrivateKey(keyText);
  } catch (err) {
    throw new UsageError(`the operator key cannot be read: ${(err as Error).message}`);
  }
  const role = env.PAYMENTS_OPERATOR_ROLE?.trim() || "admin";
  if (!isOperatorRole(role)) throw new UsageError(`PAYMENTS_OPERATOR_ROLE must be one of viewer, support, operator, finance, admin; got "${role}"`);
  const subject = operatorName(actor, env);
  return createAssertionSigner(key, { subject, name: subject, role, kind: "service" });
}

function localAdminKey(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const file = join(env.DATA_DIR?.trim() || "./var", LOCAL_ADMIN_KEY_FILE);
  return existsSync(file) ? file : undefined;
}

/**
 * The bearer for the console's admin API (`operator …`): PAYMENTS_OPERATOR_TOKEN or the `login`
 * session (adminCredential), else an admin assertion for the console signed with a key this
 * machine holds (OPERATOR_ASSERTION_PRIVATE_KEY, or the all-in-one's local admin key), so a
 * newcomer's `pnpm start` can make its first console account.
 */
export async function consoleAdminCredential(actor: string | undefined, env: Readonly<Record<string, string | undefined>>): Promise<{ url: string; token: string }> {
  try {
    return adminCredential(env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const signer = operatorSigner(actor, env);
    if (!signer) throw new UsageError("not signed in: run `login` first (or set PAYMENTS_OPERATOR_TOKEN, or run it where `pnpm start` keeps its data directory)");
    return { url: consoleUrl(env), token: await signer.assertionFor(CONSOLE_AUDIENCE) };
  }
}

/**
 * Which program the CLI is to the services, proven on every call (README, "Workload identities"):
 * WORKLOAD_KEY (with WORKLOAD_ID when it is not `spiffe://<domain>/cli`: a bank integration's own
 * path), else the all-in-one's key for this machine's CLI, `<DATA_DIR>/workloads/cli.key`.
 * undefined without either: every call is then refused (UNAUTHENTICATED).
 */
export function workloadIdentity(env: Readonly<Record<string, string | undefined>>): CallerIdentity | undefined {
  const given = env.WORKLOAD_KEY?.trim() || env[workloadKeyVariable("cli")]?.trim();
  const file = workloadKeyFile(join(env.DATA_DIR?.trim() || "./var", LOCAL_WORKLOAD_DIR), "cli");
  const keyEnv = given ? { ...env } : existsSync(file) ? { ...env, WORKLOAD_KEY: file, WORKLOAD_ID: undefined } : undefined;
  if (!keyEnv) return undefined;
  try {
    const signer = workloadSignerFromEnv(keyEnv, "cli", systemClock);
    return signer ? signedIdentity(signer) : undefined;
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message.replace(/^invalid configuration:\n\s*/, ""));
    throw err;
  }
}

/** Whether `identity` may carry an operator's assertion (the CLI; not a bank integration's key). */
export function carriesPeople(identity: CallerIdentity): boolean {
  const path = parseSpiffeId(identity.id)?.path ?? "";
  return isWorkload({ name: workloadNameOf(path) }, OPERATOR_CARRIERS);
}
