import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import test from "ava";
import { parse } from "yaml";
import { runMigrateCommand } from "@payments/access";
import { createLogger, openDatabase, parseGrantee } from "@payments/kit";
import { merchantModule } from "@payments/merchant-service";
import { createTestDatabase, mysqlTestServer, uniqueName } from "@payments/testing";

// docker-compose.yml as the split deployment's picture of who is who (docker compose itself is not
// needed: the file is read as compose reads it, merge keys included), and its MySQL init script run
// against the test server, then a real migration granting through the user pair it makes.

const root = new URL("..", import.meta.url).pathname;
const run = promisify(execFile);
const INIT_SCRIPT = "deploy/compose/mysql-init/10-runtime-users.sh";

type Service = {
  image?: string;
  environment?: Record<string, string>;
  secrets?: Array<{ source: string; target: string }>;
  configs?: Array<{ source: string; target: string }>;
  volumes?: string[];
};
type Compose = { services: Record<string, Service>; secrets: Record<string, { file: string }>; configs: Record<string, { file: string }> };

const compose = parse(readFileSync(`${root}docker-compose.yml`, "utf8"), { merge: true }) as Compose;

/** The five services and the database each serves. */
const SERVICES: Record<string, string> = { merchant: "merchant", "bank-catalog": "bank_catalog", deposit: "deposit", payout: "payout", "callback-sender": "callback_sender" };
const CALLERS = ["gateway", "console", "merchant-dashboard", "cli"];
const KEY = "/run/secrets/workload.key";
const BUNDLE = "/etc/payments/trust-bundle.json";

const userOf = (url: string | undefined) => (url ? decodeURIComponent(new URL(url.replace(/\$\{[^}]*\}/g, "x")).username) : undefined);
const databaseOf = (url: string | undefined) => (url ? new URL(url.replace(/\$\{[^}]*\}/g, "x")).pathname.slice(1) : undefined);

test("every workload's key is mounted into its own container only, and the trust bundle into every service", (t) => {
  for (const name of [...Object.keys(SERVICES), ...CALLERS]) {
    const service = compose.services[name];
    if (!service) return t.fail(`no service ${name}`);
    t.deepEqual(service.secrets, [{ source: `workload-${name}`, target: "workload.key" }], `${name} gets its own key and no other`);
    t.is(compose.secrets[`workload-${name}`]?.file, `./identities/${name}.key`, `${name}'s key is the one identity init writes`);
    t.is(service.environment?.WORKLOAD_KEY, KEY, `${name}: WORKLOAD_KEY is the mounted secret`);
    if (name in SERVICES) {
      t.regex(service.environment?.OPERATOR_ASSERTION_PUBLIC_KEY ?? "", /^\$\{OPERATOR_ASSERTION_PUBLIC_KEY:\?/, `${name} believes people's assertions signed with the console's key, which .env must give`);
      t.false("OPERATOR_ASSERTION_PRIVATE_KEY" in (service.environment ?? {}), `${name} cannot sign for a person`);
      t.deepEqual(service.configs, [{ source: "trust-bundle", target: BUNDLE }], `${name} mounts the trust bundle`);
      t.is(service.environment?.WORKLOAD_TRUST_BUNDLE, BUNDLE, name);
    }
  }
  t.is(compose.configs["trust-bundle"]?.file, "./identities/trust-bundle.json");
  // No key is given to a container that is not its workload (mysql, nats included).
  for (const [name, service] of Object.entries(compose.services)) {
    for (const secret of service.secrets ?? []) t.is(secret.source, `workload-${name}`, `${name} holds ${secret.source}`);
  }
});

test("each service serves as its own runtime user, never root, and migrates as root, granting the runtime user its tables", (t) => {
  const entries: Array<[string, string]> = [...Object.entries(SERVICES), ["console", "console"]];
  for (const [name, database] of entries) {
    const env = compose.services[name]?.environment ?? {};
    t.is(userOf(env.DATABASE_URL), `${database}_rt`, `${name} serves as ${database}_rt`);
    t.is(databaseOf(env.DATABASE_URL), database, name);
    t.is(userOf(env.MIGRATE_DATABASE_URL), "root", `${name} migrates as root`);
    t.is(databaseOf(env.MIGRATE_DATABASE_URL), database, `${name} migrates the database it serves`);
    t.deepEqual(parseGrantee(env.MIGRATE_GRANT_TO ?? ""), { user: `${database}_rt`, host: "%" }, `${name} grants its runtime user`);
    t.not(env.MIGRATE_ON_START, "0", `${name} migrates at start`);
  }
  // The merchant dashboard shares the console's database: it serves as the console's runtime user and leaves migrating to the console.
  const dashboard = compose.services["merchant-dashboard"]?.environment ?? {};
  t.is(userOf(dashboard.DATABASE_URL), "console_rt");
  t.is(dashboard.MIGRATE_ON_START, "0");
  t.false("MIGRATE_DATABASE_URL" in dashboard);
  for (const [name, service] of Object.entries(compose.services)) {
    if (service.environment?.DATABASE_URL) t.not(userOf(service.environment.DATABASE_URL), "root", `${name} does not serve as root`);
  }
  const mysql = compose.services.mysql!;
  t.true(mysql.volumes?.includes("./deploy/compose/mysql-init:/docker-entrypoint-initdb.d:ro"), "the init script makes the runtime users");
  for (const database of Object.values(entries.map(([, d]) => d))) {
    const variable = `${database.toUpperCase()}_DB_PASSWORD`;
    t.regex(mysql.environment?.[variable] ?? "", new RegExp(`^\\$\\{${variable}:\\?`), `${variable} required from .env`);
  }
});

test("the init script makes each runtime user without any privilege; root's migrate then grants it its tables, and it cannot truncate or drop the audit", async (t) => {
  const databases = ["merchant", "bank_catalog", "deposit", "payout", "callback_sender", "console"];
  const passwords = Object.fromEntries(databases.map((d) => [`${d.toUpperCase()}_DB_PASSWORD`, randomBytes(12).toString("hex")]));
  const { stdout } = await run("sh", [INIT_SCRIPT, "--print"], { cwd: root, env: { PATH: process.env.PATH, ...passwords } });
  // The same statements, for users of this run's own (a prefix) on the shared test server.
  const prefix = uniqueName("pcu_");
  const statements = stdout
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => line.replace(/'([a-z_]+_rt)'@/g, `'${prefix}$1'@`));
  t.is(statements.length, databases.length * 2);
  for (const statement of statements) t.regex(statement, /^(CREATE USER IF NOT EXISTS|ALTER USER) '[a-z0-9_]+'@'%' IDENTIFIED BY '[0-9a-f]+';$/);

  const admin = openDatabase({ url: mysqlTestServer });
  const database = await createTestDatabase();
  t.teardown(async () => {
    for (const d of databases) await admin.raw(`DROP USER IF EXISTS '${prefix}${d}_rt'@'%'`);
    await admin.destroy();
    await database.drop();
  });
  // Twice: the second run (by hand, after a password change in .env) only sets the passwords again.
  for (const statement of [...statements, ...statements]) await admin.raw(statement);
  for (const d of databases) {
    const grantee = `'${prefix}${d}_rt'@'%'`;
    const global = await admin("information_schema.USER_PRIVILEGES").where("GRANTEE", grantee).select("PRIVILEGE_TYPE");
    t.deepEqual(global.map((r: { PRIVILEGE_TYPE: string }) => r.PRIVILEGE_TYPE), ["USAGE"], `${grantee} holds nothing on the server`);
    t.deepEqual(await admin("information_schema.SCHEMA_PRIVILEGES").where("GRANTEE", grantee).select("TABLE_SCHEMA"), [], `${grantee} holds nothing on any database`);
  }

  // The merchant service's pair, as compose gives it: root migrates and grants, merchant_rt serves.
  const runtimeUrl = new URL(database.url);
  runtimeUrl.username = `${prefix}merchant_rt`;
  runtimeUrl.password = passwords.MERCHANT_DB_PASSWORD!;
  const env = { DATABASE_URL: runtimeUrl.toString(), MIGRATE_DATABASE_URL: database.url, MIGRATE_GRANT_TO: `${prefix}merchant_rt@%`, LOG_LEVEL: "silent" };
  const code = await runMigrateCommand([merchantModule], ["up"], { env, logger: createLogger({ service: "merchant", level: "silent" }) });
  t.is(code, 0);

  const runtime = openDatabase({ url: runtimeUrl.toString() });
  t.teardown(() => runtime.destroy());
  t.deepEqual(await runtime("operator_audit").count({ n: "*" }), [{ n: 0 }], "it reads its audit");
  for (const sql of ["TRUNCATE TABLE operator_audit", "DROP TABLE operator_audit", "ALTER TABLE operator_audit ADD COLUMN x INT", "DELETE FROM operator_audit", "UPDATE operator_audit SET seq = seq"]) {
    const err = await t.throwsAsync(runtime.raw(sql), undefined, sql);
    t.regex((err as { code?: string }).code ?? "", /ACCESS_DENIED/, sql);
  }
  await t.throwsAsync(runtime.raw("CREATE TABLE sneaky (id INT)"), undefined, "it creates nothing");
});
