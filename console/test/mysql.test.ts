import test from "ava";
import { verifyAssertion } from "@payments/access";
import { createTestDatabase } from "@payments/testing";
import { api, cliToken, operatorWithPassword, serviceAdminToken, signedInBrowser, testConsole } from "./harness.js";

test("on MySQL: the console creates and migrates its database; accounts, links, sessions, four-eyes and assertions work as on SQLite", async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  // The all-in-one way: DATABASE_URL is the shared base, the console's database is <base>_console.
  const c = await testConsole(t, { DATABASE_URL: database.url });
  const tables = (await c.console.context.db.raw("SELECT DATABASE() AS name")) as [Array<{ name: string }>];
  t.is(tables[0][0]?.name, `${database.name}_console`);

  const admin = await operatorWithPassword(c, { email: "Admin@Example.com", role: "admin" });
  const adminToken = await cliToken(c, "admin@example.com", admin.password);
  // Emails are unique whatever their case (stored lower-cased; utf8mb4_bin compares bytes).
  t.is((await api(c, "POST", "/api/operators", { token: adminToken, body: { email: "ADMIN@example.com", displayName: "Twin", role: "viewer" } })).status, 409);

  const asked = await api(c, "POST", "/api/operators", { token: adminToken, body: { email: "fin@example.com", displayName: "Fin", role: "finance" } });
  t.is(asked.status, 202);
  const id = (asked.body.approval as { id: string }).id;
  t.is((await api(c, "POST", `/api/approvals/${id}/approve`, { token: adminToken })).status, 403);
  const approved = await api(c, "POST", `/api/approvals/${id}/approve`, { token: await serviceAdminToken(c, "officer") });
  t.is(approved.status, 200);

  const { browser, location } = await signedInBrowser(c, admin.email, admin.password);
  t.is(location, "/");
  c.clock.advance(31 * 60_000);
  t.is((await browser.get("/")).location, "/sign-in", "idle timeout on MySQL too");

  const assertion = await api(c, "POST", "/api/cli/assertions", { token: adminToken, body: { audience: "payout" } });
  t.is((await verifyAssertion(c.publicKey, assertion.body.assertion as string, "payout", c.clock.now())).subject, "admin@example.com");
  const events = (await c.console.context.db("sign_in_events").count({ n: "*" }).first()) as { n: number };
  t.true(Number(events.n) >= 3);
});
