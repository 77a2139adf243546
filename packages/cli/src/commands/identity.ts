import { existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import {
  bundleWithKeys,
  DEFAULT_TRUST_DOMAIN,
  ensureWorkloadKey,
  keyIdOf,
  loadWorkloadKey,
  TRUST_BUNDLE_FILE,
  TrustBundle,
  workloadKeyFile,
  writeBundle,
} from "@payments/access";
import { createPublicKey } from "node:crypto";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { operatorSigner, workloadIdentity } from "../operator-signer.js";
import { SERVICES } from "../clients.js";

/**
 * The workloads a split deployment runs, each with a key of its own: the gateway, the console
 * and the merchant dashboard, the five services, the CLI of operators' machines and a bank
 * integration (one per bank, when there are several: `bank-integration/<bank>`).
 */
export const DEPLOYMENT_WORKLOADS = ["gateway", "console", "merchant-dashboard", "merchant", "bank-catalog", "deposit", "payout", "callback-sender", "cli", "bank-integration"] as const;

const PATH = /^[a-z0-9._-]+(\/[a-z0-9._-]+)*$/;

function parsePath(value: string): string {
  const path = value.trim().replace(/^spiffe:\/\/[^/]+\//, "");
  if (!PATH.test(path)) throw new UsageError(`a workload is a path of lower-case letters, digits, . _ - and /, such as gateway or bank-integration/garanti; got "${value}"`);
  return path;
}

function parseDomain(value: string): string {
  if (!/^[a-z0-9.-]+$/.test(value)) throw new UsageError(`--trust-domain: lower-case letters, digits, dots and dashes; got "${value}"`);
  return value;
}

interface IssueOptions {
  dir: string;
  bundle?: string;
  trustDomain: string;
  rotate?: boolean;
}

/**
 * `identity …`: issuing and rotating workload keys (README, "Workload identities"). Keys are
 * made here, on the machine that runs this, into a directory only the deployer reads; each key
 * goes to its one workload (a Kubernetes Secret, a compose secret), and the trust bundle of
 * their public halves to every service (WORKLOAD_TRUST_BUNDLE).
 */
export function registerIdentityCommands(program: Command, ctx: CommandContext): void {
  const identity = program.command("identity").description("workload identities: issue and rotate the keys each deployable signs its internal calls with, the trust bundle the services believe, a token for grpcurl");

  const issue = (paths: readonly string[], opts: IssueOptions) => {
    const bundleFile = opts.bundle ?? join(opts.dir, TRUST_BUNDLE_FILE);
    const issued = paths.map((path) => {
      const file = workloadKeyFile(opts.dir, path);
      if (opts.rotate && existsSync(file)) {
        // The old key stays in the bundle until `identity retire`: calls signed with it keep working while the new one rolls out.
        renameSync(file, `${file}.${Date.now()}.old`);
      }
      return { path, ...ensureWorkloadKey(opts.dir, opts.trustDomain, path) };
    });
    const bundle = bundleWithKeys(bundleFile, issued);
    writeBundle(bundleFile, bundle);
    return { issued, bundleFile, keys: bundle.size };
  };

  const report = (cmd: Command, result: ReturnType<typeof issue>) => {
    const { out } = ctx.session(cmd);
    const rows = result.issued.map((k) => ({ workload: k.spiffeId, keyFile: k.file, keyId: keyIdOf(createPublicKey(loadWorkloadKey(k.privateKeyPem))), made: k.made }));
    if (out.json) return out.data({ keys: rows, trustBundle: result.bundleFile, bundleKeys: result.keys });
    out.table(["WORKLOAD", "KEY FILE", "KEY ID", "MADE"], rows.map((r) => [r.workload, r.keyFile, r.keyId, r.made ? "yes" : "kept"]), "No keys.");
    out.line(`Trust bundle: ${result.bundleFile} (${result.keys} keys). Give each key to its workload only (WORKLOAD_KEY), the bundle to every service (WORKLOAD_TRUST_BUNDLE).`);
  };

  const common = (c: Command) =>
    c
      .requiredOption("--dir <dir>", "where the keys are kept (0600 each; readable by the deployer only)")
      .option("--bundle <file>", `the trust bundle to add their public halves to (default <dir>/${TRUST_BUNDLE_FILE})`)
      .option("--trust-domain <domain>", "the SPIFFE trust domain", parseDomain, DEFAULT_TRUST_DOMAIN);

  common(identity.command("init").description(`a key for each workload of a split deployment (${DEPLOYMENT_WORKLOADS.join(", ")}) that has none, and the trust bundle`)).action(
    (opts: IssueOptions, cmd: Command) => report(cmd, issue(DEPLOYMENT_WORKLOADS, opts)),
  );

  common(
    identity
      .command("issue")
      .argument("<workload...>", "workload paths: gateway, deposit, bank-integration/garanti, …")
      .description("a key for each named workload (kept when there is one, unless --rotate), its public half added to the trust bundle")
      .option("--rotate", "make a new key even where one exists; the old file is kept as <file>.<time>.old and its public half stays in the bundle until `identity retire`"),
  ).action((workloads: string[], opts: IssueOptions, cmd: Command) => report(cmd, issue(workloads.map(parsePath), opts)));

  identity
    .command("retire")
    .argument("<keyId...>", "key ids (as `identity issue` printed them) to drop from the trust bundle")
    .requiredOption("--bundle <file>", "the trust bundle")
    .description("drop keys from the trust bundle once their workloads sign with their new keys: calls signed with them are refused from the services' next start")
    .action((keyIds: string[], opts: { bundle: string }, cmd: Command) => {
      const { out } = ctx.session(cmd);
      const json = TrustBundle.load(opts.bundle).toJson();
      const unknown = keyIds.filter((id) => !json.keys.some((k) => k.kid === id));
      if (unknown.length > 0) throw new UsageError(`not in ${opts.bundle}: ${unknown.join(", ")}`);
      const kept = TrustBundle.load(JSON.stringify({ keys: json.keys.filter((k) => !keyIds.includes(k.kid)) }));
      writeBundle(opts.bundle, kept);
      if (out.json) return out.data({ retired: keyIds, bundleKeys: kept.size });
      out.line(`Retired ${keyIds.length} key(s); ${opts.bundle} holds ${kept.size}.`);
    });

  identity
    .command("show")
    .description("which workload this CLI signs as (WORKLOAD_KEY, or the all-in-one's key for this machine's CLI) and, with --bundle, whether the bundle believes it")
    .option("--bundle <file>", "a trust bundle to look the key up in")
    .action((opts: { bundle?: string }, cmd: Command) => {
      const session = ctx.session(cmd);
      const caller = workloadIdentity(session.io.env);
      if (!caller) throw new UsageError("no workload key: set WORKLOAD_KEY (or run where `pnpm start` keeps its data directory)");
      const bundled = opts.bundle ? TrustBundle.load(readFileSync(opts.bundle, "utf8")).toJson().keys.some((k) => k.spiffe_id === caller.id) : undefined;
      if (session.out.json) return session.out.data({ workload: caller.id, ...(bundled !== undefined ? { inBundle: bundled } : {}) });
      session.out.line(`${caller.id}${bundled === undefined ? "" : bundled ? " (in the bundle)" : " (NOT in the bundle: the services will refuse it)"}`);
    });

  identity
    .command("token")
    .description("a workload assertion of this CLI's identity for one service (60 s), for grpcurl or buf curl: -H \"x-workload-identity: $(pnpm -s cli identity token --audience bank-catalog)\"; with --operator, the operator's assertion the CLI would send (x-operator-assertion), used once for a change")
    .requiredOption("--audience <service>", `the service it is for: ${SERVICES.join(", ")}`)
    .option("--operator", "print the acting operator's assertion instead (as the CLI signs it: login session, service token or key)")
    .action(async (opts: { audience: string; operator?: boolean }, cmd: Command) => {
      const session = ctx.session(cmd);
      const audience = opts.audience.trim();
      if (!(SERVICES as readonly string[]).includes(audience)) throw new UsageError(`--audience: one of ${SERVICES.join(", ")}; got "${opts.audience}"`);
      if (opts.operator) {
        const signer = operatorSigner(session.options.actor, session.io.env);
        if (!signer) throw new UsageError("no operator to sign as: `login`, PAYMENTS_OPERATOR_TOKEN, OPERATOR_ASSERTION_PRIVATE_KEY, or the all-in-one's local admin key");
        session.out.line(await signer.assertionFor(audience, { fresh: true }));
        return;
      }
      const caller = workloadIdentity(session.io.env);
      if (!caller) throw new UsageError("no workload key: set WORKLOAD_KEY (or run where `pnpm start` keeps its data directory)");
      session.out.line(await caller.headerFor(audience));
    });
}
