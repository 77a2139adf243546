import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { SMTPServer } from "smtp-server";
import { type RunningServices } from "@payments/kit";
import { loadAssertionPrivateKey, signAssertion } from "@payments/access";
import { startConsole, type RunningConsole } from "@payments/console";
import { TEST_OPERATOR_PRIVATE_KEY_PEM, TEST_WORKLOAD_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// `merchant user invite|reset` against a console that mails one-time links (SMTP_URL): the CLI
// says whom the link was mailed to and prints no link (the console answers none); a real SMTP
// server on an ephemeral port receives the mails.

let services: RunningServices | undefined;
let running: RunningConsole | undefined;
let smtp: SMTPServer | undefined;
let dir: string;
let env: Record<string, string>;
const recipients: string[] = [];

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), "cli-merchant-user-mail-"));
  smtp = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      stream.resume();
      stream.on("end", () => {
        recipients.push(...session.envelope.rcptTo.map((r) => r.address));
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp!.listen(0, "127.0.0.1", resolve));
  const address = smtp.server.address();
  if (!address || typeof address === "string") throw new Error("no SMTP port");
  services = await startInProcess(["merchant"], { env: { DATA_DIR: join(dir, "services"), MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" } });
  running = await startConsole({
    env: { ...TEST_WORKLOAD_ENV, DATA_DIR: join(dir, "console"), CONSOLE_PORT: "0", LOG_LEVEL: "silent", CONSOLE_AUDIENCE: "both", SMTP_URL: `smtp://127.0.0.1:${address.port}`, MAIL_FROM: "payments@cli.test" },
    transport: services.localTransport,
    assertionPrivateKey: TEST_OPERATOR_PRIVATE_KEY_PEM,
  });
  const admin = await signAssertion(loadAssertionPrivateKey(TEST_OPERATOR_PRIVATE_KEY_PEM), { subject: "bootstrap", name: "bootstrap", role: "admin", kind: "service", audience: "console", ttlSeconds: 600 });
  env = { CONSOLE_URL: running.url, XDG_CONFIG_HOME: join(dir, "config"), PAYMENTS_OPERATOR_TOKEN: admin };
});

test.after.always(async () => {
  await running?.stop();
  await services?.stop();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("merchant user invite and reset with a console that mails: the CLI says whom the link went to and prints none", async (t) => {
  const created = await cli(["merchant", "create", "--name", "Mail Shop", "--sandbox", "--json", "--grpc-url", services!.server.url]);
  t.is(created.code, 0, created.stderr);
  const merchantId = (singleJson(created.stdout) as { merchantId: string }).merchantId;

  const invite = await cli(["merchant", "user", "invite", "--merchant", merchantId, "--email", "owner@mail-shop.test", "--role", "owner"], env);
  t.is(invite.code, 0, invite.stderr);
  t.regex(invite.stdout, /owner@mail-shop\.test: owner of /);
  t.regex(invite.stdout, /The one-time link was mailed to owner@mail-shop\.test\./);
  t.notRegex(invite.stdout, /set-password/);
  t.deepEqual(recipients, ["owner@mail-shop.test"]);

  const list = await cli(["merchant", "user", "list", "--merchant", merchantId, "--json"], env);
  const userId = (singleJson(list.stdout) as { users: Array<{ id: string }> }).users[0]!.id;
  const reset = await cli(["merchant", "user", "reset", "--merchant", merchantId, "--user", userId], env);
  t.is(reset.code, 0, reset.stderr);
  t.regex(reset.stdout, /signed out everywhere\.\nThe one-time link was mailed to owner@mail-shop\.test\./);
  t.notRegex(reset.stdout, /set-password/);
  t.deepEqual(recipients, ["owner@mail-shop.test", "owner@mail-shop.test"]);
});
