import test from "ava";
import { listAudit } from "@payments/access";
import { api, cliToken, operatorWithPassword, serviceAdminToken, setPasswordThroughLink, testConsole, type TestConsole } from "./harness.js";

const path = (email: string, action: string) => `/api/operators/${encodeURIComponent(email)}/${action}`;

/** The first admin (made directly: nobody could approve it) signed in with the CLI. */
async function firstAdmin(c: TestConsole): Promise<string> {
  const admin = await operatorWithPassword(c, { email: "first@example.com", role: "admin" });
  return cliToken(c, admin.email, admin.password);
}

test("creating an admin waits for a second admin: the maker cannot approve it, another admin can, and the account then exists with its link", async (t) => {
  const c = await testConsole(t);
  const maker = await firstAdmin(c);
  const asked = await api(c, "POST", "/api/operators", { token: maker, body: { email: "second@example.com", displayName: "Second", role: "admin" } });
  t.is(asked.status, 202);
  const approval = asked.body.approval as { id: string; requestedBy: string; status: string; expiresAt: string };
  t.is(approval.requestedBy, "first@example.com");
  t.is(approval.status, "pending");
  t.is(approval.expiresAt, new Date(c.clock.now().getTime() + 24 * 3600_000).toISOString());
  t.falsy(await c.console.context.db("operators").where({ email: "second@example.com" }).first(), "not created yet");

  const own = await api(c, "POST", `/api/approvals/${approval.id}/approve`, { token: maker });
  t.is(own.status, 403);
  t.is((own.body.error as { code: string }).code, "OWN_REQUEST");

  // A viewer can neither see nor decide.
  const viewer = await operatorWithPassword(c, { email: "viewer@example.com", role: "viewer" });
  const viewerToken = await cliToken(c, viewer.email, viewer.password);
  t.is((await api(c, "GET", "/api/approvals", { token: viewerToken })).status, 403);
  t.is((await api(c, "POST", `/api/approvals/${approval.id}/approve`, { token: viewerToken })).status, 403);

  const listed = await api(c, "GET", "/api/approvals", { token: maker });
  t.deepEqual((listed.body.approvals as Array<{ id: string }>).map((a) => a.id), [approval.id]);

  // Another admin: here the key holder's service account (an admin assertion for the console).
  const approved = await api(c, "POST", `/api/approvals/${approval.id}/approve`, { token: await serviceAdminToken(c, "security-officer") });
  t.is(approved.status, 200);
  t.is((approved.body.approval as { status: string; decidedBy: string }).decidedBy, "security-officer");
  t.is((approved.body.operator as { role: string }).role, "admin");

  // Each step, refused or done, is in the console's own append-only audit.
  const audit = (await listAudit(c.console.context.db, { limit: 50 })) as { rows: Array<{ rpc: string; actor: string; outcome: string; targets: string }> };
  const steps = audit.rows.map((r) => `${r.rpc} ${r.actor} ${r.outcome}`);
  for (const step of ["console/CreateOperator first@example.com APPROVAL_REQUIRED", "console/ApproveChange first@example.com OWN_REQUEST", "console/ApproveChange security-officer ok"]) {
    t.true(steps.includes(step), `${step} in ${JSON.stringify(steps)}`);
  }
  t.true(audit.rows.some((r) => r.rpc === "console/CreateOperator" && r.targets.includes("second@example.com")));
  t.is((await setPasswordThroughLink(c, (approved.body.link as { url: string }).url, "second admin password")).status, 303);
  t.is((await api(c, "POST", `/api/approvals/${approval.id}/approve`, { token: await serviceAdminToken(c, "someone-else") })).status, 409, "decided once");
});

test("raising someone to finance waits for a second admin, who can approve it; a rejection changes nothing; lowering needs nobody", async (t) => {
  const c = await testConsole(t);
  const first = await firstAdmin(c);
  // A second human admin, through the approval of the first.
  const asked = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email: "second@example.com", displayName: "Second", role: "admin" } });
  const made = await api(c, "POST", `/api/approvals/${(asked.body.approval as { id: string }).id}/approve`, { token: first });
  t.is(made.status, 200);
  await setPasswordThroughLink(c, (made.body.link as { url: string }).url, "second admin password");
  const second = await cliToken(c, "second@example.com", "second admin password");

  await operatorWithPassword(c, { email: "ops@example.com", role: "operator" });
  const raise = await api(c, "POST", path("ops@example.com", "role"), { token: first, body: { role: "finance" } });
  t.is(raise.status, 202);
  const id = (raise.body.approval as { id: string }).id;
  t.is(((await c.console.context.db("operators").where({ email: "ops@example.com" }).first()) as { role: string }).role, "operator");
  t.is((await api(c, "POST", `/api/approvals/${id}/approve`, { token: first })).status, 403);
  t.is((await api(c, "POST", `/api/approvals/${id}/approve`, { token: second })).status, 200);
  t.is(((await c.console.context.db("operators").where({ email: "ops@example.com" }).first()) as { role: string }).role, "finance");

  const again = await api(c, "POST", path("ops@example.com", "role"), { token: first, body: { role: "admin" } });
  const rejected = await api(c, "POST", `/api/approvals/${(again.body.approval as { id: string }).id}/reject`, { token: second });
  t.is(rejected.status, 200);
  t.is(((await c.console.context.db("operators").where({ email: "ops@example.com" }).first()) as { role: string }).role, "finance");

  const lower = await api(c, "POST", path("ops@example.com", "role"), { token: first, body: { role: "support" } });
  t.is(lower.status, 200);
  t.is((lower.body.operator as { role: string }).role, "support");
});

test("a request not approved within 24 hours expires and can no longer be approved", async (t) => {
  const c = await testConsole(t);
  const first = await firstAdmin(c);
  const asked = await api(c, "POST", "/api/operators", { token: first, body: { email: "fin@example.com", displayName: "Fin", role: "finance" } });
  c.clock.advance(24 * 3600_000);
  const late = await api(c, "POST", `/api/approvals/${(asked.body.approval as { id: string }).id}/approve`, { token: await serviceAdminToken(c, "other") });
  t.is(late.status, 409);
  // The maker's CLI session (12 h) has ended too: a fresh admin assertion reads the list.
  const reader = await serviceAdminToken(c, "reader");
  t.deepEqual((await api(c, "GET", "/api/approvals", { token: reader })).body.approvals, []);
  t.is(((await api(c, "GET", "/api/approvals?status=expired", { token: reader })).body.approvals as unknown[]).length, 1);
});

test("disabling an operator ends their sessions at once; enabling, approved by a second admin, lets them sign in again; the admin API refuses non-admins", async (t) => {
  const c = await testConsole(t);
  const admin = await firstAdmin(c);
  const ops = await operatorWithPassword(c, { email: "ops@example.com", role: "operator" });
  const opsToken = await cliToken(c, ops.email, ops.password);
  t.is((await api(c, "GET", "/api/operators", { token: opsToken })).status, 403);
  t.is((await api(c, "GET", "/api/operators")).status, 401);

  t.is((await api(c, "POST", path(ops.email, "disable"), { token: admin })).status, 200);
  t.is((await api(c, "POST", "/api/cli/assertions", { token: opsToken, body: { audience: "deposit" } })).status, 401);
  t.is(((await c.console.context.db("sessions").where({ operator_id: ((await c.console.context.db("operators").where({ email: ops.email }).first()) as { id: string }).id }).count({ n: "*" }).first()) as { n: number }).n, 0);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: ops })).status, 401);

  // Enabling gives access back: it waits for a second admin.
  const enable = await api(c, "POST", path(ops.email, "enable"), { token: admin });
  t.is(enable.status, 202);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: ops })).status, 401, "still disabled");
  t.is((await api(c, "POST", `/api/approvals/${(enable.body.approval as { id: string }).id}/approve`, { token: await serviceAdminToken(c, "second-bot") })).status, 200);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: ops })).status, 201);

  const listed = await api(c, "GET", "/api/operators?limit=1", { token: admin });
  t.is((listed.body.operators as unknown[]).length, 1);
  const rest = await api(c, "GET", `/api/operators?limit=10&after=${listed.body.next as string}`, { token: admin });
  const emails = [...(listed.body.operators as Array<{ email: string }>), ...(rest.body.operators as Array<{ email: string }>)].map((o) => o.email);
  t.deepEqual(emails.sort(), ["first@example.com", "ops@example.com"], "two pages, every account once");
  t.is(rest.body.next, null);
  t.false(JSON.stringify(listed.body).includes("scrypt$"), "no password hash leaves the console");
});

test("the last enabled admin cannot be disabled or demoted, and nobody disables themselves", async (t) => {
  const c = await testConsole(t);
  const admin = await firstAdmin(c);
  const bot = await serviceAdminToken(c);
  t.is((await api(c, "POST", path("first@example.com", "disable"), { token: bot })).status, 409);
  t.is((await api(c, "POST", path("first@example.com", "role"), { token: bot, body: { role: "viewer" } })).status, 409);
  t.is((await api(c, "POST", path("first@example.com", "disable"), { token: admin })).status, 403);
});
