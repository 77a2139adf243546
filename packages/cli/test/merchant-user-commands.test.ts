import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { type RunningServices } from "@payments/kit";
import { loadAssertionPrivateKey, signAssertion } from "@payments/access";
import { startConsole, type RunningConsole } from "@payments/console";
import { TEST_OPERATOR_PRIVATE_KEY_PEM, TEST_WORKLOAD_ENV } from "@payments/testing";
// The CLI has no runtime dependency on the services; the tests start the real one, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// `merchant user invite|list`: the console's admin API in front of the real merchant service
// (which says whether the merchant exists), the console signing with the test operators' key.

let services: RunningServices | undefined;
let running: RunningConsole | undefined;
let dir: string;
let env: Record<string, string>;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), "cli-merchant-user-"));
  services = await startInProcess(["merchant"], { env: { DATA_DIR: join(dir, "services"), MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" } });
  running = await startConsole({
    env: { ...TEST_WORKLOAD_ENV, DATA_DIR: join(dir, "console"), CONSOLE_PORT: "0", LOG_LEVEL: "silent", CONSOLE_AUDIENCE: "both" },
    transport: services.localTransport,
    assertionPrivateKey: TEST_OPERATOR_PRIVATE_KEY_PEM,
  });
  const admin = await signAssertion(loadAssertionPrivateKey(TEST_OPERATOR_PRIVATE_KEY_PEM), { subject: "bootstrap", name: "bootstrap", role: "admin", kind: "service", audience: "console", ttlSeconds: 600 });
  env = { CONSOLE_URL: running.url, XDG_CONFIG_HOME: join(dir, "config"), PAYMENTS_OPERATOR_TOKEN: admin };
});

test.after.always(async () => {
  await running?.stop();
  await services?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function createMerchant(name: string): Promise<string> {
  const r = await cli(["merchant", "create", "--name", name, "--sandbox", "--json", "--grpc-url", services!.server.url]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (singleJson(r.stdout) as { merchantId: string }).merchantId;
}

test("merchant user invite prints the one-time link of the merchant dashboard; list shows the user", async (t) => {
  const merchantId = await createMerchant("Invite Shop");
  const text = await cli(["merchant", "user", "invite", "--merchant", merchantId, "--email", "Owner@Shop.test", "--role", "owner"], env);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /owner@shop\.test: owner of /);
  t.regex(text.stdout, /\/merchant\/set-password\?token=/);

  const json = await cli(["merchant", "user", "invite", "--merchant", merchantId, "--email", "fin@shop.test", "--role", "finance", "--name", "Fin", "--json"], env);
  t.is(json.code, 0, json.stderr);
  const body = singleJson(json.stdout) as { user: { email: string; role: string; merchantId: string; displayName: string }; link: { url: string } };
  t.like(body.user, { email: "fin@shop.test", role: "finance", merchantId, displayName: "Fin" });
  t.regex(body.link.url, /^http:\/\/localhost:\d+\/merchant\/set-password\?token=[\w-]+$/);
  // The link opens the merchant dashboard's set-password page.
  t.is((await fetch(body.link.url.replace(/^https?:\/\/[^/]+/, running!.url))).status, 200);

  const list = await cli(["merchant", "user", "list", "--merchant", merchantId, "--json"], env);
  t.is(list.code, 0, list.stderr);
  t.deepEqual((singleJson(list.stdout) as { users: Array<{ email: string }> }).users.map((u) => u.email), ["owner@shop.test", "fin@shop.test"]);
  const table = await cli(["merchant", "user", "list", "--merchant", merchantId], env);
  t.regex(table.stdout, /fin@shop\.test/);
});

test("merchant user invite: a bad role is a usage error; an unknown merchant and a taken email are refused", async (t) => {
  const badRole = await cli(["merchant", "user", "invite", "--merchant", "mer_x", "--email", "a@b.test", "--role", "admin"], env);
  t.is(badRole.code, 2);
  t.regex(badRole.stderr, /--role must be one of owner, developer, finance, viewer/);

  const unknown = await cli(["merchant", "user", "invite", "--merchant", "mer_doesnotexist", "--email", "a@b.test", "--role", "viewer"], env);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /NOT_FOUND/);

  const merchantId = await createMerchant("Taken Shop");
  t.is((await cli(["merchant", "user", "invite", "--merchant", merchantId, "--email", "same@shop.test", "--role", "viewer"], env)).code, 0);
  const again = await cli(["merchant", "user", "invite", "--merchant", merchantId, "--email", "same@shop.test", "--role", "viewer"], env);
  t.is(again.code, 1);
  t.regex(again.stderr, /MERCHANT_USER_EXISTS/);
});

test("merchant user reset prints a new one-time link (the earlier one stops working); another merchant's user id is refused", async (t) => {
  const merchantId = await createMerchant("Reset Shop");
  const invited = await cli(["merchant", "user", "invite", "--merchant", merchantId, "--email", "dev@reset.test", "--role", "developer", "--json"], env);
  t.is(invited.code, 0, invited.stderr);
  const { user, link } = singleJson(invited.stdout) as { user: { id: string }; link: { url: string } };
  const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, running!.url);

  const text = await cli(["merchant", "user", "reset", "--merchant", merchantId, "--user", user.id], env);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /dev@reset\.test of .*: signed out everywhere\./);
  t.regex(text.stdout, /\/merchant\/set-password\?token=/);
  t.is((await fetch(local(link.url))).status, 410, "the invitation's link no longer works");

  const json = await cli(["merchant", "user", "reset", "--merchant", merchantId, "--user", user.id, "--clear-totp", "--json"], env);
  t.is(json.code, 0, json.stderr);
  const body = singleJson(json.stdout) as { user: { id: string; totpEnrolled: boolean }; link: { url: string } };
  t.like(body.user, { id: user.id, totpEnrolled: false });
  t.is((await fetch(local(body.link.url))).status, 200, "the newest link opens the set-password page");

  const other = await createMerchant("Other Reset Shop");
  const refused = await cli(["merchant", "user", "reset", "--merchant", other, "--user", user.id], env);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /NOT_FOUND/);
  const missing = await cli(["merchant", "user", "reset", "--merchant", merchantId], env);
  t.is(missing.code, 2, "--user is required");
});
