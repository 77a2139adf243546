import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import test from "ava";

/**
 * What a merchant installs: the sdk and its one dependency, @payments/signing, each packed
 * with `pnpm pack` (prepack builds dist/), unpacked into a project outside the monorepo,
 * run with plain node against a local server, and typechecked the way a merchant's tsc
 * resolves the packed declarations.
 */

const run = promisify(execFile);
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
const REPO_ROOT = join(PACKAGE_DIR, "..", "..");
const SIGNING_DIR = join(REPO_ROOT, "packages", "signing");

/** A merchant's plain node: no loader (tsx) inherited through NODE_OPTIONS. */
function plainEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}

async function packInto(dir: string, packageDir: string, destination: string): Promise<string[]> {
  const out = join(dir, packageDir.split("/").pop()!);
  await mkdir(out, { recursive: true });
  await run("pnpm", ["pack", "--pack-destination", out], { cwd: packageDir, env: plainEnv() });
  const tarball = (await readdir(out)).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error(`pnpm pack made no tarball in ${packageDir}`);
  await mkdir(destination, { recursive: true });
  await run("tar", ["-xzf", join(out, tarball), "-C", destination, "--strip-components=1"]);
  const { stdout } = await run("tar", ["-tzf", join(out, tarball)]);
  return stdout.split("\n").filter(Boolean);
}

// Plain node, ESM: a sandbox-like local gateway that checks the signature with the packed
// signing package, a create and a paged listing through the client, a PaymentsError, and a
// callback verified with the verifier the sdk re-exports.
const EXAMPLE = `
import { createServer } from "node:http";
import { PaymentsClient, PaymentsError, verifyCallback, verifyStandardWebhook } from "@payments/sdk";
import { sign, verify } from "@payments/signing";

const seen = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const signed = verify(["sk_pack"], { timestamp: req.headers["x-timestamp"], method: req.method, path: req.url, body }, req.headers["x-signature"]);
    seen.push(signed);
    const send = (status, payload) => res.writeHead(status, { "content-type": "application/json", "x-request-id": "req_pack" }).end(JSON.stringify(payload));
    if (req.url === "/v1/deposit") return send(201, { success: true, data: { transactionId: "dep_1", ...JSON.parse(body), status: "pending" }, timestamp: 0 });
    if (req.url.startsWith("/v1/transactions")) return send(200, { success: true, data: req.url.includes("cursor") ? { items: [{ transactionId: "t2" }], nextCursor: null } : { items: [{ transactionId: "t1" }], nextCursor: "n" }, timestamp: 0 });
    send(404, { success: false, error: { code: "TRANSACTION_NOT_FOUND", message: "no deposit with this id" }, timestamp: 0 });
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const client = new PaymentsClient({ baseUrl: "http://127.0.0.1:" + server.address().port, apiKey: "pk", apiSecret: "sk_pack" });
const deposit = await client.createDeposit({ processId: "o1", amount: 100, customer: { id: "c", name: "N", username: "u" } });
const ids = [];
for await (const tx of client.transactions({ limit: 1 })) ids.push(tx.transactionId);
let error;
try { await client.getDeposit("nope"); } catch (e) { error = { isPaymentsError: e instanceof PaymentsError, status: e.status, code: e.code, requestId: e.requestId }; }
server.close();

const path = "/cb";
const cbBody = JSON.stringify({ id: "evt_1", type: "deposit.completed", createdAt: new Date().toISOString(), data: { transactionId: "dep_1", status: "completed", sequence: 2 } });
const timestamp = String(Math.floor(Date.now() / 1000));
const headers = { "x-event-id": "evt_1", "x-event-type": "deposit.completed", "x-timestamp": timestamp, "x-signature": sign("sk_pack", { timestamp, method: "POST", path, body: cbBody }) };
const callback = verifyCallback({ secrets: "sk_pack", headers, body: cbBody, path });
const loader = process.execArgv.join(" ") + " " + (process.env.NODE_OPTIONS ?? "");
console.log(JSON.stringify({ deposit, ids, error, signed: seen.every(Boolean), callback: callback.ok, standardWebhooks: typeof verifyStandardWebhook, loader }));
`;

// A TypeScript merchant (NodeNext, no @types/node): the generated types reach the methods.
const MERCHANT_TS = `
import { PaymentsClient, PaymentsError, verifyCallback, type Deposit, type CreateDepositBody, type Transaction } from "@payments/sdk";
const client = new PaymentsClient({ baseUrl: "https://api.example.com", apiKey: "pk", apiSecret: "sk" });
const body: CreateDepositBody = { processId: "o1", amount: 100, customer: { id: "c", name: "N", username: "u" } };
export async function flow(): Promise<string> {
  const deposit: Deposit = await client.createDeposit(body);
  const status: "pending" | "completed" | "failed" | "expired" | "cancelled" = deposit.status;
  const banks = await client.availableBanks();
  const first: string | undefined = banks.banks[0]?._id;
  for await (const tx of client.transactions({ type: "deposit", limit: 50 })) {
    const t: Transaction = tx;
    void t.transactionId;
  }
  try {
    await client.sandbox.payDeposit(deposit.transactionId, { amount: 100 });
  } catch (error) {
    if (error instanceof PaymentsError) return error.code + error.status + (error.requestId ?? "");
  }
  // @ts-expect-error amount is a number
  await client.createDeposit({ ...body, amount: "100" });
  const verdict = verifyCallback({ secrets: "sk", headers: {}, body: "{}", path: "/cb" });
  return status + (first ?? "") + String(verdict.ok);
}
`;

test("the packed sdk and signing tarballs work in a merchant's project with plain node, and typecheck", async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), "payments-sdk-pack-"));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  const merchant = join(tmp, "merchant");
  const modules = join(merchant, "node_modules", "@payments");

  const files = await packInto(tmp, PACKAGE_DIR, join(modules, "sdk"));
  await packInto(tmp, SIGNING_DIR, join(modules, "signing"));
  t.true(files.includes("package/dist/index.js"), files.join("\n"));
  t.true(files.includes("package/dist/index.d.ts"));
  t.true(files.includes("package/dist/openapi.d.ts"), "the generated types ship");
  t.true(files.includes("package/README.md"));
  t.false(files.some((f) => f.startsWith("package/test/") || f.includes("tsconfig")), files.join("\n"));
  await writeFile(join(merchant, "package.json"), JSON.stringify({ name: "merchant", private: true, type: "module" }));

  const manifest = JSON.parse(await readFile(join(modules, "sdk", "package.json"), "utf8")) as Record<string, unknown>;
  t.deepEqual(manifest.exports, { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" }, "./package.json": "./package.json" });
  t.deepEqual(manifest.dependencies, { "@payments/signing": "0.1.0" }, "signing is the one runtime dependency, at a real version");
  t.is(manifest.publishConfig, undefined);

  const example = await run(process.execPath, ["--input-type=module", "-e", EXAMPLE], { cwd: merchant, env: plainEnv() });
  const out = JSON.parse(example.stdout) as Record<string, unknown>;
  t.like(out, {
    deposit: { transactionId: "dep_1", processId: "o1", status: "pending" },
    ids: ["t1", "t2"],
    error: { isPaymentsError: true, status: 404, code: "TRANSACTION_NOT_FOUND", requestId: "req_pack" },
    signed: true,
    callback: true,
    standardWebhooks: "function",
  });
  t.notRegex(String(out.loader), /tsx/);

  await writeFile(join(merchant, "merchant.ts"), MERCHANT_TS);
  await writeFile(
    join(merchant, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [], strict: true, noEmit: true }, files: ["merchant.ts"] }),
  );
  const tsc = await run("pnpm", ["exec", "tsc", "-p", join(merchant, "tsconfig.json")], { cwd: REPO_ROOT, env: plainEnv() }).catch((error: { stdout?: string; stderr?: string }) => error);
  t.is((tsc.stdout ?? "") + (tsc.stderr ?? ""), "", "the merchant's code typechecks against the packed declarations");
});
