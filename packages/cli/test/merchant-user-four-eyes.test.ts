import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { loadAssertionPrivateKey, signAssertion } from "@payments/access";
import { startConsole } from "@payments/console";
import { TEST_OPERATOR_PRIVATE_KEY_PEM, TEST_WORKLOAD_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// Once the console has an admin, an operator's invite or reset of a merchant's user waits for a
// second admin (one admin holding the links of two users of one merchant would be both people of
// that merchant's four-eyes): `merchant user invite|reset` says so, and `operator approve` prints
// the user and the link to the admin who approves.

test("merchant user invite and reset wait for a second admin once an admin exists; operator approve prints the link to the approver", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "cli-merchant-user-4e-"));
  const services = await startInProcess(["merchant"], { env: { DATA_DIR: join(dir, "services"), MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" } });
  const running = await startConsole({
    env: { ...TEST_WORKLOAD_ENV, DATA_DIR: join(dir, "console"), CONSOLE_PORT: "0", LOG_LEVEL: "silent", CONSOLE_AUDIENCE: "both" },
    transport: services.localTransport,
    assertionPrivateKey: TEST_OPERATOR_PRIVATE_KEY_PEM,
  });
  t.teardown(async () => {
    await running.stop();
    await services.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const key = loadAssertionPrivateKey(TEST_OPERATOR_PRIVATE_KEY_PEM);
  const tokenOf = (subject: string) => signAssertion(key, { subject, name: subject, role: "admin", kind: "service", audience: "console", ttlSeconds: 600 });
  const env = { CONSOLE_URL: running.url, XDG_CONFIG_HOME: join(dir, "config"), PAYMENTS_OPERATOR_TOKEN: await tokenOf("maker-bot") };
  const approver = { ...env, PAYMENTS_OPERATOR_TOKEN: await tokenOf("approver-bot") };
  t.is((await cli(["operator", "create", "--email", "first@example.com", "--name", "First", "--role", "admin"], env)).code, 0, "the first admin: at once");
  const created = await cli(["merchant", "create", "--name", "Four Eyes Shop", "--sandbox", "--json", "--grpc-url", services.server.url]);
  const merchantId = (singleJson(created.stdout) as { merchantId: string }).merchantId;

  const invite = await cli(["merchant", "user", "invite", "--merchant", merchantId, "--email", "owner@4e.test", "--role", "owner"], env);
  t.is(invite.code, 0, invite.stderr);
  t.regex(invite.stdout, /Waiting for a second admin: approval apr_\S+ \(invite_merchant_user owner@4e\.test\)/);
  t.notRegex(invite.stdout, /set-password/);
  const id = /approval (apr_\S+)/.exec(invite.stdout)?.[1] ?? "";
  const own = await cli(["operator", "approve", id], env);
  t.is(own.code, 1);
  t.regex(own.stderr, /OWN_REQUEST/);
  const approved = await cli(["operator", "approve", id], approver);
  t.is(approved.code, 0, approved.stderr);
  t.regex(approved.stdout, new RegExp(`owner@4e\\.test: owner of ${merchantId}\\.\\nOne-time link \\(hand it to the user; it works once, until [^)]+\\):\\n\\S+/merchant/set-password\\?token=`));

  const users = singleJson((await cli(["merchant", "user", "list", "--merchant", merchantId, "--json"], env)).stdout) as { users: Array<{ id: string }> };
  const reset = await cli(["merchant", "user", "reset", "--merchant", merchantId, "--user", users.users[0]!.id], env);
  t.regex(reset.stdout, /Waiting for a second admin: approval apr_\S+ \(reset_merchant_user owner@4e\.test\)/);
  const resetId = /approval (apr_\S+)/.exec(reset.stdout)?.[1] ?? "";
  t.regex((await cli(["operator", "approve", resetId], approver)).stdout, /\/merchant\/set-password\?token=/);
});
