import test from "ava";
import { listAudit } from "@payments/access";
import { samePerson } from "../src/identity/approvals.js";
import { api, cliToken, operatorWithPassword, serviceAdminToken, setPasswordThroughLink, testConsole, type JsonAnswer, type TestConsole } from "./harness.js";

// Four-eyes between people (issue 32): once an admin exists, no account change that hands someone
// access (a new account of any role, a raised role, an enabled account, a new sign-in link) is
// made by one admin; the second admin is never the maker under any spelling of their name; the
// one-time link goes to the approver, never the maker; every step is audited with its change.

const path = (email: string, action: string) => `/api/operators/${encodeURIComponent(email)}/${action}`;
const approve = (c: TestConsole, id: string, token: string) => api(c, "POST", `/api/approvals/${id}/approve`, { token });
const approvalId = (answer: JsonAnswer) => (answer.body.approval as { id: string }).id;

/** The first admin (made at once: bootstrap) signed in with the CLI, and the console's key holder's second account. */
async function twoAdmins(c: TestConsole): Promise<{ maker: string; second: string }> {
  const admin = await operatorWithPassword(c, { email: "alice@example.com", role: "admin" });
  return { maker: await cliToken(c, admin.email, admin.password), second: await serviceAdminToken(c, "security-officer") };
}

const operatorRow = (c: TestConsole, email: string) => c.console.context.db("operators").where({ email }).first() as Promise<{ role: string; disabled: number | boolean; totp_secret: string | null } | undefined>;

test("the issue's case: an admin alone creates an operator account: it waits, the admin gets no link, cannot approve it, and so cannot become a second person", async (t) => {
  const c = await testConsole(t);
  const { maker, second } = await twoAdmins(c);
  const asked = await api(c, "POST", "/api/operators", { token: maker, body: { email: "alice.two@example.com", displayName: "Alice Two", role: "operator" } });
  t.is(asked.status, 202);
  t.is(asked.body.status, "pending_approval");
  t.is(await operatorRow(c, "alice.two@example.com"), undefined, "no account yet");
  t.is((await approve(c, approvalId(asked), maker)).status, 403);

  const approved = await approve(c, approvalId(asked), second);
  t.is(approved.status, 200);
  t.is(approved.headers.get("cache-control"), "no-store");
  const link = (approved.body.link as { url: string }).url;
  t.regex(link, /\/set-password\?token=/);
  // Nothing the maker can read holds the link: the 202, the approvals, the accounts, the audit.
  const token = new URL(link).searchParams.get("token")!;
  const seen = [asked.body, (await api(c, "GET", "/api/approvals?status=all", { token: maker })).body, (await api(c, "GET", "/api/operators", { token: maker })).body];
  const audit = await listAudit(c.console.context.db, { limit: 100 });
  if (audit === "bad-cursor") throw new Error("bad cursor");
  for (const body of [...seen, audit.rows]) t.false(JSON.stringify(body).includes(token));
  t.is((await setPasswordThroughLink(c, link, "the second person's password")).status, 303);
});

test("once an admin exists, creating a viewer, raising a role by one step, enabling and resetting each wait for a second admin; nothing changes until one approves", async (t) => {
  const c = await testConsole(t);
  const { maker, second } = await twoAdmins(c);
  const viewer = await operatorWithPassword(c, { email: "vera@example.com", role: "viewer" });
  const created = await api(c, "POST", "/api/operators", { token: maker, body: { email: "new@example.com", displayName: "New", role: "viewer" } });
  t.is(created.status, 202);
  const raised = await api(c, "POST", path(viewer.email, "role"), { token: maker, body: { role: "support" } });
  t.is(raised.status, 202);
  t.is((await operatorRow(c, viewer.email))?.role, "viewer");
  const reset = await api(c, "POST", path(viewer.email, "reset"), { token: maker, body: { clearTotp: true } });
  t.is(reset.status, 202);
  t.false(JSON.stringify(reset.body).includes("set-password"), "no link for the maker");
  t.is((await api(c, "POST", "/api/cli/sessions", { body: viewer })).status, 201, "the password still works: nothing was reset");
  t.is((await api(c, "POST", path(viewer.email, "disable"), { token: maker })).status, 200, "taking access away needs one admin");
  const enabled = await api(c, "POST", path(viewer.email, "enable"), { token: maker });
  t.is(enabled.status, 202);
  t.truthy((await operatorRow(c, viewer.email))?.disabled);

  const pending = (await api(c, "GET", "/api/approvals", { token: second })).body.approvals as Array<{ id: string; action: string }>;
  t.deepEqual(pending.map((a) => a.action).sort(), ["create_operator", "enable_operator", "reset_operator", "set_role"]);
  for (const a of pending) t.is((await approve(c, a.id, maker)).status, 403, `${a.action}: not by its maker`);
  const links = new Map<string, string>();
  for (const a of pending) {
    const approved = await approve(c, a.id, second);
    t.is(approved.status, 200, a.action);
    if (approved.body.link) links.set(a.action, (approved.body.link as { url: string }).url);
  }
  const row = await operatorRow(c, viewer.email);
  t.is(row?.role, "support");
  t.falsy(row?.disabled);
  t.truthy(await operatorRow(c, "new@example.com"));
  // The approver holds the links of the new account and of the reset.
  t.deepEqual([...links.keys()].sort(), ["create_operator", "reset_operator"]);
  t.is((await setPasswordThroughLink(c, links.get("reset_operator")!, "a new password for vera")).status, 303);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: viewer })).status, 401, "the old password is gone");
});

test("the maker under another spelling is still the maker: upper case, surrounding spaces, full-width letters", async (t) => {
  const c = await testConsole(t);
  const { maker } = await twoAdmins(c);
  const asked = await api(c, "POST", "/api/operators", { token: maker, body: { email: "ops@example.com", displayName: "Ops", role: "operator" } });
  t.is(asked.status, 202);
  // Whoever holds the signing key can mint any name: these are alice@example.com all the same.
  for (const spelling of ["ALICE@EXAMPLE.COM", "Alice@Example.com", " alice@example.com ", "ａｌｉｃｅ@example.com"]) {
    const own = await approve(c, approvalId(asked), await serviceAdminToken(c, spelling));
    t.is(own.status, 403, spelling);
    t.is((own.body.error as { code: string }).code, "OWN_REQUEST");
  }
  t.is(await operatorRow(c, "ops@example.com"), undefined);
  // A service account's name is compared the same way.
  const byBot = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c, "Deploy-Bot"), body: { email: "ops2@example.com", displayName: "Ops 2", role: "viewer" } });
  t.is((await approve(c, approvalId(byBot), await serviceAdminToken(c, "deploy-bot"))).status, 403);
  t.is((await approve(c, approvalId(byBot), maker)).status, 200, "another person approves");
  // The maker check itself, whatever spelling reaches it (a row stored before names were canonical).
  t.true(samePerson(" ＡＬＩＣＥ@Example.com", "alice@example.com"));
  t.false(samePerson("alice@example.com", "alice2@example.com"));
  // Accounts are stored in the same one spelling.
  const spelled = await api(c, "POST", "/api/operators", { token: maker, body: { email: " ＯＰＳ３@Example.COM ", displayName: "Ops 3", role: "viewer" } });
  t.is((spelled.body.approval as { targetEmail: string }).targetEmail, "ops3@example.com");
});

test("bootstrap: with no enabled admin the first admin (and anything before it) is made at once by the key holder, who is handed the link", async (t) => {
  const c = await testConsole(t);
  const first = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email: "first@example.com", displayName: "First", role: "admin" } });
  t.is(first.status, 201);
  t.regex((first.body.link as { url: string }).url, /set-password/);
  // An admin exists now (enabled, even before it set a password): the next account waits.
  const next = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email: "next@example.com", displayName: "Next", role: "viewer" } });
  t.is(next.status, 202);
});

test("every step, refused or done, is in the console's audit; a change whose audit row cannot be written is not made", async (t) => {
  const c = await testConsole(t);
  const { maker, second } = await twoAdmins(c);
  const asked = await api(c, "POST", "/api/operators", { token: maker, body: { email: "ops@example.com", displayName: "Ops", role: "operator" } });
  await approve(c, approvalId(asked), maker);
  await approve(c, approvalId(asked), second);
  t.is((await api(c, "POST", "/api/operators", { token: maker, body: { email: "not an email", displayName: "X", role: "viewer" } })).status, 400);
  t.is((await api(c, "POST", "/api/operators", { token: maker, body: { email: "x@example.com", role: "viewer" } })).status, 400);
  const audit = await listAudit(c.console.context.db, { limit: 100 });
  if (audit === "bad-cursor") throw new Error("bad cursor");
  const steps = audit.rows.map((r) => `${r.rpc} ${r.actor} ${r.outcome}`);
  for (const step of [
    "console/CreateOperator alice@example.com APPROVAL_REQUIRED",
    "console/ApproveChange alice@example.com OWN_REQUEST",
    "console/ApproveChange security-officer ok",
    "console/CreateOperator alice@example.com INVALID_EMAIL",
    "console/CreateOperator alice@example.com VALIDATION_ERROR",
  ]) {
    t.true(steps.includes(step), `${step} in ${JSON.stringify(steps)}`);
  }
  const approvedRow = audit.rows.find((r) => r.rpc === "console/ApproveChange" && r.outcome === "ok");
  t.is(approvedRow?.maker, "alice@example.com");
  t.is(approvedRow?.approval_id, approvalId(asked));

  // The audit written in the change's transaction: without a table to write it to, nothing is asked or made.
  const db = c.console.context.db;
  await db.schema.renameTable("operator_audit", "operator_audit_away");
  try {
    const refused = await api(c, "POST", "/api/operators", { token: maker, body: { email: "ghost@example.com", displayName: "Ghost", role: "viewer" } });
    t.is(refused.status, 500);
    t.is(await db("operator_approvals").where({ target_email: "ghost@example.com" }).first(), undefined, "no approval stored without its audit row");
    const disable = await api(c, "POST", path("ops@example.com", "disable"), { token: maker });
    t.is(disable.status, 500);
    t.falsy((await operatorRow(c, "ops@example.com"))?.disabled, "not disabled without its audit row");
  } finally {
    await db.schema.renameTable("operator_audit_away", "operator_audit");
  }
  t.is((await api(c, "POST", path("ops@example.com", "disable"), { token: maker })).status, 200);
});

test("two admins approving one request at once: it is applied once, the other is told it is no longer pending", async (t) => {
  const c = await testConsole(t);
  const { maker } = await twoAdmins(c);
  const asked = await api(c, "POST", "/api/operators", { token: maker, body: { email: "once@example.com", displayName: "Once", role: "viewer" } });
  const [a, b] = await Promise.all([approve(c, approvalId(asked), await serviceAdminToken(c, "bob")), approve(c, approvalId(asked), await serviceAdminToken(c, "carol"))]);
  t.deepEqual([a.status, b.status].sort(), [200, 409]);
  t.is(((await c.console.context.db("operators").where({ email: "once@example.com" }).count({ n: "*" }).first()) as { n: number | string }).n, 1);
});
