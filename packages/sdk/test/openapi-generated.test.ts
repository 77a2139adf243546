import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import test from "ava";

/**
 * The client's types are read out of src/openapi.ts, which is generated from the gateway's
 * committed gateway/openapi.json. If the document changed and the types were not made again,
 * the SDK would ship types of an API that no longer exists.
 */

const run = promisify(execFile);
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");

test("src/openapi.ts is what openapi-typescript makes of gateway/openapi.json now", async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), "payments-sdk-openapi-"));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  const fresh = join(tmp, "openapi.ts");
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  // Run from the package: openapi-typescript needs its own TypeScript 5, not the repo's.
  await run("pnpm", ["exec", "openapi-typescript", join(PACKAGE_DIR, "..", "..", "gateway", "openapi.json"), "--output", fresh], { cwd: PACKAGE_DIR, env });
  const [committed, generated] = await Promise.all([readFile(join(PACKAGE_DIR, "src", "openapi.ts"), "utf8"), readFile(fresh, "utf8")]);
  t.true(committed === generated, "packages/sdk/src/openapi.ts is stale: run pnpm --filter @payments/sdk generate");
});
