import { mkdtempSync, rmSync, statSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { createPublicKey } from "node:crypto";
import { AssertionError, generateAssertionKeyPair, signAssertion, verifyAssertion, loadAssertionPrivateKey } from "@payments/access";
import { TEST_WORKLOAD_ENV } from "@payments/testing";
import { startConsole } from "@payments/console";
import { consoleAssertionSigner, exchangingSigner } from "../src/console-session.js";
import { cli, singleJson } from "./capture.js";

async function setup(t: import("ava").ExecutionContext) {
  const dir = mkdtempSync(join(tmpdir(), "cli-console-"));
  const { privateKeyPem } = generateAssertionKeyPair();
  const running = await startConsole({ env: { ...TEST_WORKLOAD_ENV, DATA_DIR: join(dir, "data"), CONSOLE_PORT: "0", LOG_LEVEL: "silent" }, assertionPrivateKey: privateKeyPem });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = { CONSOLE_URL: running.url, XDG_CONFIG_HOME: join(dir, "config") };
  const key = loadAssertionPrivateKey(privateKeyPem);
  const bootstrap = await signAssertion(key, { subject: "bootstrap", name: "bootstrap", role: "admin", kind: "service", audience: "console", ttlSeconds: 600 });
  return { running, env, dir, privateKeyPem, bootstrap };
}

/** Sets the password through the link as the operator's browser would. */
async function setPassword(url: string, password: string): Promise<void> {
  const page = await fetch(url);
  const cookie = (page.headers.getSetCookie()[0] ?? "").split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  const res = await fetch(new URL("/set-password", url), {
    method: "POST",
    redirect: "manual",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, token: new URL(url).searchParams.get("token") ?? "", password, confirm: password }).toString(),
  });
  if (res.status !== 303) throw new Error(`set-password answered ${res.status}`);
}

test("operator create with a service token prints a one-time link; login caches a 0600 session; logout ends it", async (t) => {
  const { env, bootstrap } = await setup(t);
  const created = await cli(["operator", "create", "--email", "ops@example.com", "--name", "Ops", "--role", "operator", "--json"], { ...env, PAYMENTS_OPERATOR_TOKEN: bootstrap });
  t.is(created.code, 0, created.stderr);
  const link = (singleJson(created.stdout) as { link: { url: string } }).link.url;
  await setPassword(link, "a long enough password");

  const login = await cli(["login", "--email", "ops@example.com", "--password", "a long enough password"], env);
  t.is(login.code, 0, login.stderr);
  t.regex(login.stdout, /Signed in as ops@example.com \(operator\)/);
  const file = join(env.XDG_CONFIG_HOME, "payments", "session.json");
  t.is(statSync(file).mode & 0o777, 0o600);
  t.false(readFileSync(file, "utf8").includes("a long enough password"));

  // The session's signer gets assertions from the console for any audience.
  const signer = consoleAssertionSigner(env);
  t.truthy(signer);
  const assertion = await signer!.assertionFor("deposit");
  t.is(await signer!.assertionFor("deposit"), assertion, "reused while fresh");

  // An operator is not an admin.
  const list = await cli(["operator", "list"], env);
  t.is(list.code, 1);
  t.regex(list.stderr, /FORBIDDEN/);

  t.is((await cli(["logout"], env)).code, 0);
  t.is(consoleAssertionSigner(env), undefined);
  const wrong = await cli(["login", "--email", "ops@example.com", "--password", "not the password!"], env);
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /INVALID_CREDENTIALS/);
});

test("operator token mints a service account's token for the console alone, which exchanges it for a 60-second assertion per call; without the key it is a usage error", async (t) => {
  const { env, privateKeyPem } = await setup(t);
  // The key is left out explicitly: the test harness may give the CLI a signing key by default.
  t.is((await cli(["operator", "token", "--name", "nightly-recon", "--role", "finance"], { ...env, OPERATOR_ASSERTION_PRIVATE_KEY: undefined })).code, 2);
  const minted = await cli(["operator", "token", "--name", "nightly-recon", "--role", "finance", "--ttl", "7d", "--json"], { ...env, OPERATOR_ASSERTION_PRIVATE_KEY: privateKeyPem });
  t.is(minted.code, 0, minted.stderr);
  const { token } = singleJson(minted.stdout) as { token: string };
  const publicKey = createPublicKey(loadAssertionPrivateKey(privateKeyPem));
  t.deepEqual(await verifyAssertion(publicKey, token, "console"), { subject: "nightly-recon", name: "nightly-recon", role: "finance", kind: "service" });
  // A service takes nothing that lives a week: not even for the audience it would name.
  for (const audience of ["merchant", "deposit", "payout"]) await t.throwsAsync(verifyAssertion(publicKey, token, audience), { instanceOf: AssertionError }, audience);
  // The console signs, for the token, one 60-second assertion per call: a fresh one for a change.
  const signer = exchangingSigner(env.CONSOLE_URL, token);
  const read = await signer.assertionFor("deposit");
  t.deepEqual(await verifyAssertion(publicKey, read, "deposit"), { subject: "nightly-recon", name: "nightly-recon", role: "finance", kind: "service" });
  t.is(await signer.assertionFor("deposit"), read, "a read reuses it");
  t.not(await signer.assertionFor("deposit", { fresh: true }), read, "a change gets its own");
  t.is((await cli(["operator", "token", "--name", "x", "--role", "admin", "--ttl", "91d"], { ...env, OPERATOR_ASSERTION_PRIVATE_KEY: privateKeyPem })).code, 2);
});

test("once an admin exists, operator create, set-role (raising), enable and reset wait for a second admin; the maker cannot approve; operator approve by another admin applies each and prints the link to them", async (t) => {
  const { env, bootstrap, running, privateKeyPem } = await setup(t);
  const first = await cli(["operator", "create", "--email", "first@example.com", "--name", "First", "--role", "admin", "--json"], { ...env, PAYMENTS_OPERATOR_TOKEN: bootstrap });
  await setPassword((singleJson(first.stdout) as { link: { url: string } }).link.url, "first admin password");
  t.is((await cli(["login", "--email", "first@example.com", "--password", "first admin password"], env)).code, 0);
  const second = await signAssertion(loadAssertionPrivateKey(privateKeyPem), { subject: "second-admin", name: "second-admin", role: "admin", kind: "service", audience: "console", ttlSeconds: 600 });
  const approveAs = (token: string | undefined, id: string) => cli(["operator", "approve", id], token ? { ...env, PAYMENTS_OPERATOR_TOKEN: token } : env);
  const idOf = (stdout: string) => /approval (apr_\S+)/.exec(stdout)?.[1] ?? "";

  // Create: waits; no link for the maker; the maker cannot approve; the second admin gets the link.
  const asked = await cli(["operator", "create", "--email", "ops@example.com", "--name", "Ops", "--role", "viewer"], env);
  t.is(asked.code, 0, asked.stderr);
  t.regex(asked.stdout, /Waiting for a second admin: approval apr_\S+ \(create_operator ops@example\.com\)/);
  t.notRegex(asked.stdout, /set-password/);
  const own = await approveAs(undefined, idOf(asked.stdout));
  t.is(own.code, 1);
  t.regex(own.stderr, /OWN_REQUEST/);
  const made = await approveAs(second, idOf(asked.stdout));
  t.is(made.code, 0, made.stderr);
  t.regex(made.stdout, /ops@example\.com: viewer\.\nOne-time link \(hand it to the operator; it works once, until [^)]+\):\n\S+\/set-password\?token=/);

  // Raising a role, by any step: waits, then applied by the other admin.
  const raise = await cli(["operator", "set-role", "--email", "ops@example.com", "--role", "support"], env);
  t.regex(raise.stdout, /Waiting for a second admin/);
  const row = () => running.context.db("operators").where({ email: "ops@example.com" }).first() as Promise<{ role: string; disabled: number | boolean }>;
  t.is((await row()).role, "viewer");
  t.is((await approveAs(second, idOf(raise.stdout))).code, 0);
  t.is((await row()).role, "support");

  // Disabling is one admin's; enabling again waits.
  t.is((await cli(["operator", "disable", "--email", "ops@example.com"], env)).code, 0);
  const enable = await cli(["operator", "enable", "--email", "ops@example.com"], env);
  t.regex(enable.stdout, /Waiting for a second admin: approval apr_\S+ \(enable_operator ops@example\.com\)/);
  t.truthy((await row()).disabled);
  t.is((await approveAs(second, idOf(enable.stdout))).code, 0);
  t.falsy((await row()).disabled);

  // A reset: the new link is the approver's.
  const reset = await cli(["operator", "reset", "--email", "ops@example.com"], env);
  t.notRegex(reset.stdout, /set-password/);
  const resetDone = await approveAs(second, idOf(reset.stdout));
  t.regex(resetDone.stdout, /set-password\?token=/);
  const pending = await cli(["operator", "approvals", "--json"], env);
  t.deepEqual((singleJson(pending.stdout) as { approvals: unknown[] }).approvals, []);
});
