import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import test from "ava";
import { sign } from "@payments/signing";

/**
 * What a merchant installs: `pnpm pack` (its prepack runs the build script), the tarball
 * unpacked into a project outside the monorepo, imported with plain node (no tsx, no
 * TypeScript), and its types checked the way a merchant's tsc resolves them.
 */

const run = promisify(execFile);
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
const REPO_ROOT = join(PACKAGE_DIR, "..", "..");

/** The environment of a merchant's plain node: no loader (tsx) inherited through NODE_OPTIONS. */
function plainEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}

const SECRET = "sk_merchant";
const PATH = "/hooks/payments?shop=42";
const BODY = JSON.stringify({
  id: "evt_pack",
  type: "withdrawal.completed",
  createdAt: new Date().toISOString(),
  data: { transactionId: "wd_1", status: "completed", sequence: 7, amount: 5000 },
});

function callbackHeaders(secret: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    "x-event-id": "evt_pack",
    "x-event-type": "withdrawal.completed",
    "x-timestamp": timestamp,
    "x-signature": sign(secret, { timestamp, method: "POST", path: PATH, body: BODY }),
  };
}

// Runs in plain node, from the merchant's project: verifies the callback given in the environment.
const ESM_SCRIPT = `
import { verifyCallback, CALLBACK_EVENT_TYPES } from "@payments/signing";
const headers = new Headers(JSON.parse(process.env.CB_HEADERS));
const good = verifyCallback({ secrets: ["sk_other", "${SECRET}"], headers, body: Buffer.from(process.env.CB_BODY), path: process.env.CB_PATH });
const wrong = verifyCallback({ secrets: "sk_wrong", headers, body: process.env.CB_BODY, path: process.env.CB_PATH });
const loader = process.execArgv.join(" ") + " " + (process.env.NODE_OPTIONS ?? "");
console.log(JSON.stringify({ good, wrong: wrong.ok ? "verified" : wrong.reason, types: CALLBACK_EVENT_TYPES.length, loader }));
`;

const CJS_SCRIPT = `
const { verifyCallback } = require("@payments/signing");
const result = verifyCallback({ secrets: "${SECRET}", headers: JSON.parse(process.env.CB_HEADERS), body: process.env.CB_BODY, path: process.env.CB_PATH });
console.log(JSON.stringify({ ok: result.ok }));
`;

const MERCHANT_TS = `
import { verifyCallback, type CallbackEvent, type CallbackVerificationResult } from "@payments/signing";
const result: CallbackVerificationResult = verifyCallback({ secrets: ["sk"], headers: { "x-event-id": "e" }, body: "{}", path: "/cb" });
export const sequence: number | undefined = result.ok ? result.event.data.sequence : undefined;
export const reason: string = result.ok ? "" : result.reason;
export function handle(event: CallbackEvent): string {
  switch (event.type) {
    case "deposit.completed":
      return event.data.transactionId;
    default:
      return event.type;
  }
}
`;

test("the packed tarball works in a merchant's project with plain node, no TypeScript tooling", async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), "payments-signing-pack-"));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));

  // Pack as it would be published (prepack builds dist/ with tsconfig.build.json).
  await run("pnpm", ["pack", "--pack-destination", tmp], { cwd: PACKAGE_DIR, env: plainEnv() });
  const tarball = (await readdir(tmp)).find((name) => name.endsWith(".tgz"));
  if (!tarball) return t.fail("pnpm pack made no tarball");
  const { stdout: listing } = await run("tar", ["-tzf", join(tmp, tarball)]);
  const files = listing.split("\n").filter(Boolean).sort();
  t.true(files.includes("package/dist/index.js"), listing);
  t.true(files.includes("package/dist/index.d.ts"), listing);
  t.true(files.includes("package/README.md"), listing);
  t.false(files.some((f) => f.startsWith("package/test/") || f.includes("tsconfig")), listing);
  // src/ ships too: the declaration and source maps in dist/ point into it.
  t.true(files.includes("package/src/index.ts"), listing);

  // Install it by hand into a project outside the monorepo.
  const merchant = join(tmp, "merchant");
  const installed = join(merchant, "node_modules", "@payments", "signing");
  await mkdir(installed, { recursive: true });
  await run("tar", ["-xzf", join(tmp, tarball), "-C", installed, "--strip-components=1"]);
  await writeFile(join(merchant, "package.json"), JSON.stringify({ name: "merchant", private: true, type: "module" }));

  const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8")) as Record<string, unknown>;
  t.deepEqual(manifest.exports, { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" }, "./package.json": "./package.json" });
  t.is(manifest.types, "./dist/index.d.ts");
  t.is(manifest.main, "./dist/index.js");
  t.is(manifest.dependencies, undefined, "no runtime dependencies");
  t.is(manifest.publishConfig, undefined, "publishConfig applied, not shipped");

  const env = { ...plainEnv(), CB_HEADERS: JSON.stringify(callbackHeaders(SECRET)), CB_BODY: BODY, CB_PATH: PATH };

  // ESM, plain node.
  const esm = await run(process.execPath, ["--input-type=module", "-e", ESM_SCRIPT], { cwd: merchant, env });
  const out = JSON.parse(esm.stdout) as { good: { ok: boolean; event?: { data: { sequence: number } } }; wrong: string; types: number; loader: string };
  t.true(out.good.ok, esm.stdout);
  t.is(out.good.event?.data.sequence, 7);
  t.is(out.wrong, "INVALID_SIGNATURE");
  t.is(out.types, 8);
  t.notRegex(out.loader, /tsx/);

  // CommonJS require() of the ESM build, where node supports it (20.19+, 22.12+).
  if ((process.features as { require_module?: boolean }).require_module) {
    const cjs = await run(process.execPath, ["-e", CJS_SCRIPT], { cwd: merchant, env });
    t.deepEqual(JSON.parse(cjs.stdout), { ok: true });
  }

  // A TypeScript merchant (NodeNext resolution, no @types/node) gets the declarations.
  await writeFile(join(merchant, "merchant.ts"), MERCHANT_TS);
  await writeFile(
    join(merchant, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022"], types: [], strict: true, noEmit: true }, files: ["merchant.ts"] }),
  );
  const tsc = await run("pnpm", ["exec", "tsc", "-p", join(merchant, "tsconfig.json")], { cwd: REPO_ROOT, env: plainEnv() }).catch((error: { stdout?: string; stderr?: string }) => error);
  t.is((tsc.stdout ?? "") + (tsc.stderr ?? ""), "", "the merchant's code typechecks against the packed declarations");
});
