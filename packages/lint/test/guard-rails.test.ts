import test from "ava";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ESLint } from "eslint";

// The guard rails themselves: that `pnpm test` runs them, that the linter holds the rules the
// project relies on as errors, and that each layering rule catches what it is there to catch
// (fixtures/layers is a tiny workspace that breaks every rule once, and keeps to it once).

const lintPackage = fileURLToPath(new URL("..", import.meta.url));
const root = fileURLToPath(new URL("../../..", import.meta.url));
const run = promisify(execFile);

test("pnpm test runs the linter and the layering rules before the suites", async (t) => {
  const manifest = JSON.parse(await readFile(`${root}package.json`, "utf8")) as { scripts: Record<string, string> };
  const steps = manifest.scripts.test?.split("&&").map((step) => step.trim()) ?? [];
  t.true(steps.includes("pnpm run lint"), manifest.scripts.test);
  t.true(steps.includes("pnpm run layers"), manifest.scripts.test);
  t.true(steps.indexOf("pnpm run layers") < steps.indexOf("ava"), "the rules run before the suites");
  t.regex(manifest.scripts.lint ?? "", /eslint -c packages\/lint\/eslint\.config\.js/);
  t.regex(manifest.scripts.layers ?? "", /depcruise --config packages\/lint\/dependency-cruiser\.cjs/);
});

test("the linter holds the type-aware rules as errors over sources and tests", async (t) => {
  const eslint = new ESLint({ cwd: root, overrideConfigFile: `${lintPackage}eslint.config.js` });
  for (const file of ["services/deposit/src/deposit-moves.ts", "gateway/src/server.ts", "services/payout/test/ledger-mysql.test.ts", "test/readme.test.ts"]) {
    const config = (await eslint.calculateConfigForFile(`${root}${file}`)) as { rules: Record<string, unknown[]> } | undefined;
    t.truthy(config, `${file} is linted`);
    for (const rule of ["no-floating-promises", "no-misused-promises", "switch-exhaustiveness-check", "await-thenable", "no-unnecessary-condition"]) {
      t.is(config?.rules[`@typescript-eslint/${rule}`]?.[0], 2, `${rule} is an error in ${file}`);
    }
  }
  t.true(await eslint.isPathIgnored(`${root}packages/contracts/src/gen/payments/deposit/v1/deposit_pb.ts`), "generated code is not linted");
});

test("each layering rule catches its violation, and allowed imports pass", async (t) => {
  const fixture = `${lintPackage}fixtures/layers`;
  const result = await run(`${lintPackage}node_modules/.bin/depcruise`, ["--config", `${lintPackage}dependency-cruiser.cjs`, "--output-type", "err", "services", "gateway", "packages"], {
    cwd: fixture,
  }).then(
    () => ({ failed: false, output: "" }),
    (err: { stdout?: string; stderr?: string }) => ({ failed: true, output: `${err.stdout ?? ""}${err.stderr ?? ""}` }),
  );
  t.true(result.failed, "depcruise exits non-zero on violations");
  const found = new Set(result.output.split("\n").map((line) => /error ([a-z-]+): (\S+) → (\S+)/.exec(line)?.slice(1, 4).join(" ")).filter(Boolean));
  const expected = [
    "services-stay-apart services/alpha/src/index.ts services/beta/src/index.ts",
    "services-stay-apart services/alpha/test/alpha.test.ts services/beta/src/index.ts",
    "services-import-no-edge services/alpha/src/index.ts gateway/src/index.ts",
    "edges-import-no-service gateway/src/index.ts services/beta/src/index.ts",
    "edges-import-no-service packages/cli/src/index.ts services/alpha/src/index.ts",
    "only-the-all-in-one-composes packages/records/src/index.ts services/beta/src/index.ts",
    "kit-holds-no-domain packages/kit/src/index.ts packages/records/src/index.ts",
    "contracts-stand-alone packages/contracts/src/index.ts packages/kit/src/index.ts",
    "testing-only-in-tests gateway/src/index.ts packages/testing/src/index.ts",
    "workspace-imports-resolve gateway/src/index.ts @payments/not-declared",
    "no-dist-imports packages/contracts/src/index.ts packages/sdk/dist/index.js",
  ];
  for (const violation of expected) t.true(found.has(violation), `caught: ${violation}\n${result.output}`);
  // What the layering allows: the all-in-one composing services, a service's test using the harness.
  for (const line of found) {
    t.false(line?.includes("packages/all-in-one/"), `allowed: ${line}`);
    t.false(line?.includes("services/alpha/test/alpha.test.ts packages/testing"), `allowed: ${line}`);
  }
});
