import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { MerchantService } from "@payments/contracts/merchant";
import { generateAssertionKeyPair, loadAssertionPrivateKey, signAssertion } from "@payments/access";
import { type Db, type RunningServices } from "@payments/kit";
import { createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, TEST_WORKLOAD_ENV, type JetStreamTestEnv, type TestDatabase } from "@payments/testing";
import { startConsole } from "@payments/console";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// `audit verify` against the merchant service on MariaDB, its heads published on JetStream: the
// chain verifies; a row a privileged user deleted (its trigger dropped and put back), a row
// altered, and a tail cut off with the head row set back are each named, the last against a
// head published before; the console's own audit verifies through its admin API. Serial: each
// test does something to the chain and puts it back.

interface Verdict {
  service: string;
  ok: boolean;
  rows: number;
  head: { seq: string; hash: string };
  published: { heads: number; highest?: { seq: string; hash: string } };
  problem?: { kind: string; seq: string; id?: string; message: string };
}

let running: RunningServices | undefined;
let database: TestDatabase | undefined;
let nats: JetStreamTestEnv | undefined;
let url: string;
let db: Db;

test.before(async () => {
  database = await createTestDatabase();
  nats = jetStreamTestEnv();
  running = await startInProcess(["merchant"], { mode: "split", env: { DATABASE_URL: database.url, ...nats, LOG_LEVEL: "fatal", MASTER_KEY: "ab".repeat(32), AUDIT_HEAD_INTERVAL: "200ms" } });
  url = running.server.url;
  db = running.contexts.get("merchant")!.db;
  const merchants = createServiceClient(MerchantService, url, { timeoutMs: 30_000 });
  for (let i = 0; i < 6; i++) await merchants.createMerchant({ name: `Audited Shop ${i}`, sandbox: true });
});

test.after.always(async () => {
  await running?.stop();
  await database?.drop();
  if (nats) await deleteTestStream(nats);
});

async function verify(args: readonly string[] = [], env: Record<string, string> = {}): Promise<{ code: number; verdict: Verdict; stderr: string }> {
  const { code, stdout, stderr } = await cli(["audit", "verify", "--service", "merchant", "--grpc-url", url, "--json", ...args], env);
  if (!stdout) throw new Error(`audit verify printed nothing (exit ${code}): ${stderr}`);
  const verdict = (singleJson(stdout) as { services: Verdict[] }).services[0]!;
  return { code, verdict, stderr };
}

const withNats = () => ({ NATS_URL: nats!.NATS_URL, NATS_STREAM: nats!.NATS_STREAM, NATS_SUBJECT_PREFIX: nats!.NATS_SUBJECT_PREFIX });

async function head(): Promise<{ seq: number; hash: string }> {
  return (await db("operator_audit_head").where({ id: 1 }).first()) as { seq: number; hash: string };
}

/** Runs `fn` as a privileged user would: the append-only trigger of `op` dropped, and put back after. */
async function withoutTrigger(op: "update" | "delete", fn: () => Promise<unknown>): Promise<void> {
  await db.raw(`DROP TRIGGER operator_audit_no_${op}`);
  try {
    await fn();
  } finally {
    await db.raw(`CREATE TRIGGER operator_audit_no_${op} BEFORE ${op.toUpperCase()} ON operator_audit FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'operator_audit is append-only'`);
  }
}

/** Waits until the head the service published last is `seq`. */
async function publishedUpTo(seq: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { verdict } = await verify([], withNats());
    if (Number(verdict.published.highest?.seq ?? -1) >= seq) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no head ${seq} published`);
}

test.serial("the chain verifies: every row, the head it ends at, and every head the service published", async (t) => {
  const { seq, hash } = await head();
  t.true(seq >= 6);
  await publishedUpTo(seq);
  const { code, verdict } = await verify([], withNats());
  t.is(code, 0);
  t.like(verdict, { ok: true, rows: seq, head: { seq: String(seq), hash } });
  t.true(verdict.published.heads >= 1);
  const text = await cli(["audit", "verify", "--service", "merchant", "--grpc-url", url], withNats());
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, new RegExp(`^merchant: verified ${seq} rows, head ${seq}:${hash}; reaches every head published`));
});

test.serial("a row deleted by a privileged user (its trigger dropped) is named, as missing; put back as it was, the chain is whole again", async (t) => {
  const row = (await db("operator_audit").where({ seq: 3 }).first()) as Record<string, unknown>;
  await withoutTrigger("delete", () => db("operator_audit").where({ seq: 3 }).delete());
  const { code, verdict, stderr } = await verify();
  t.is(code, 1);
  t.like(verdict, { ok: false, problem: { kind: "missing", seq: "3" } });
  t.regex(stderr, /the audit is not intact: merchant: row 3 is missing/);
  const text = await cli(["audit", "verify", "--service", "merchant", "--grpc-url", url]);
  t.regex(text.stdout, /^merchant: NOT INTACT: row 3 is missing/);
  await db("operator_audit").insert(row);
  t.is((await verify()).code, 0);
});

test.serial("a row altered in place is named, and one altered with its hash recomputed is named by the next row's link", async (t) => {
  const row = (await db("operator_audit").where({ seq: 2 }).first()) as { id: string; reason: string; row_hash: string };
  await withoutTrigger("update", () => db("operator_audit").where({ seq: 2 }).update({ reason: "nothing happened here" }));
  t.like((await verify()).verdict, { ok: false, problem: { kind: "altered", seq: "2", id: row.id } });
  await withoutTrigger("update", () => db("operator_audit").where({ seq: 2 }).update({ reason: row.reason }));
  t.is((await verify()).code, 0);
  // Rewritten with its hash recomputed (a hand that knows the encoding): the next row's link gives it away.
  await withoutTrigger("update", () => db("operator_audit").where({ seq: 4 }).update({ row_hash: "0".repeat(64) }));
  t.like((await verify()).verdict, { ok: false, problem: { kind: "altered", seq: "4" } });
  const original = (await db("operator_audit").where({ seq: 4 }).first()) as { id: string };
  await withoutTrigger("update", async () => {
    const { auditRowHash } = await import("@payments/access");
    await db("operator_audit").where({ seq: 4 }).update({ row_hash: auditRowHash((await db("operator_audit").where({ id: original.id }).first()) as never) });
  });
  t.is((await verify()).code, 0, "put back");
});

test.serial("a cut tail with the head set back passes the database's own head, but not the head published before it, nor one given by hand", async (t) => {
  const before = await head();
  await publishedUpTo(before.seq);
  const kept = (await db("operator_audit").where({ seq: before.seq - 2 }).first()) as { row_hash: string };
  await withoutTrigger("delete", () => db("operator_audit").where("seq", ">", before.seq - 2).delete());
  await db("operator_audit_head").where({ id: 1 }).update({ seq: before.seq - 2, hash: kept.row_hash });
  // The database alone cannot tell: its head says the chain ends there.
  t.is((await verify()).code, 0);
  // Published since the cut (every 200 ms here), the lower head does not hide the higher one published before.
  await new Promise((resolve) => setTimeout(resolve, 600));
  const published = await verify([], withNats());
  t.is(published.code, 1);
  t.like(published.verdict, { ok: false, problem: { kind: "cut", seq: String(before.seq - 1) } });
  t.regex(published.verdict.problem!.message, new RegExp(`rows ${before.seq - 1}–${before.seq} are missing.*published at`));
  const byHand = await verify(["--head", `${before.seq}:${before.hash}`]);
  t.like(byHand.verdict, { ok: false, problem: { kind: "cut" } });
  const wrongHash = await verify(["--head", `${before.seq - 2}:${"f".repeat(64)}`]);
  t.like(wrongHash.verdict, { ok: false, problem: { kind: "altered", seq: String(before.seq - 2) } });
});

test.serial("--head needs --service and a seq:hash; an unknown service is a usage error", async (t) => {
  t.is((await cli(["audit", "verify", "--head", `1:${"a".repeat(64)}`, "--grpc-url", url])).code, 2);
  t.is((await cli(["audit", "verify", "--service", "merchant", "--head", "1:nothex", "--grpc-url", url])).code, 2);
  t.is((await cli(["audit", "verify", "--service", "ledger", "--grpc-url", url])).code, 2);
});

test.serial("the console's own audit verifies through its admin API, and an altered row of it is named", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "cli-audit-console-"));
  const { privateKeyPem } = generateAssertionKeyPair();
  const console_ = await startConsole({ env: { ...TEST_WORKLOAD_ENV, DATA_DIR: join(dir, "data"), CONSOLE_PORT: "0", LOG_LEVEL: "silent" }, assertionPrivateKey: privateKeyPem });
  t.teardown(async () => {
    await console_.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const token = await signAssertion(loadAssertionPrivateKey(privateKeyPem), { subject: "auditor", name: "auditor", role: "viewer", kind: "service", audience: "console", ttlSeconds: 600 });
  const admin = await signAssertion(loadAssertionPrivateKey(privateKeyPem), { subject: "bootstrap", name: "bootstrap", role: "admin", kind: "service", audience: "console", ttlSeconds: 600 });
  const env = { CONSOLE_URL: console_.url, XDG_CONFIG_HOME: join(dir, "config") };
  // A change the console audits itself: an operator account made by the bootstrap admin.
  t.is((await cli(["operator", "create", "--email", "ops@example.com", "--name", "Ops", "--role", "viewer"], { ...env, PAYMENTS_OPERATOR_TOKEN: admin })).code, 0);
  const ok = await cli(["audit", "verify", "--service", "console", "--json"], { ...env, PAYMENTS_OPERATOR_TOKEN: token });
  t.is(ok.code, 0, ok.stderr);
  const verdict = (singleJson(ok.stdout) as { services: Verdict[] }).services[0]!;
  t.like(verdict, { service: "console", ok: true });
  t.true(verdict.rows >= 1);
  const consoleDb = (console_ as unknown as { context: { db: Db } }).context.db;
  await consoleDb.raw("DROP TRIGGER operator_audit_no_update");
  await consoleDb("operator_audit").where({ seq: 1 }).update({ actor: "somebody else" });
  const altered = await cli(["audit", "verify", "--service", "console", "--json"], { ...env, PAYMENTS_OPERATOR_TOKEN: token });
  t.is(altered.code, 1);
  t.like((singleJson(altered.stdout) as { services: Verdict[] }).services[0], { ok: false, problem: { kind: "altered", seq: "1" } });
});
