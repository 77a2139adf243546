import test from "ava";
import { createRouterTransport, createClient } from "@connectrpc/connect";
import { DepositService } from "@payments/contracts/deposit";
import { AssertionError, OPERATOR_ASSERTION_HEADER, verifyAssertion } from "@payments/access";
import { operatorAssertionInterceptor } from "../src/index.js";
import { api, cliToken, operatorWithPassword, testConsole } from "./harness.js";

test("a CLI session gets 60-second assertions for the asked audience that verifyAssertion accepts, naming the operator", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "Ops@Example.com", role: "operator" });
  const login = await api(c, "POST", "/api/cli/sessions", { body: { email, password } });
  t.is(login.status, 201);
  const token = login.body.token as string;
  t.is(login.body.expiresAt, new Date(c.clock.now().getTime() + 12 * 3600_000).toISOString());
  // Stored hashed only.
  const rows = await c.console.context.db("sessions").where({ channel: "cli" }).select<Array<{ id_hash: string }>>("id_hash");
  t.is(rows.length, 1);
  t.not(rows[0]?.id_hash, token);

  const res = await api(c, "POST", "/api/cli/assertions", { token, body: { audience: "deposit" } });
  t.is(res.status, 200);
  const assertion = res.body.assertion as string;
  const identity = await verifyAssertion(c.publicKey, assertion, "deposit", c.clock.now());
  t.deepEqual(identity, { subject: "ops@example.com", name: "Ops", role: "operator", kind: "human" });
  await t.throwsAsync(() => verifyAssertion(c.publicKey, assertion, "payout", c.clock.now()), { instanceOf: AssertionError });
  await t.throwsAsync(() => verifyAssertion(c.publicKey, assertion, "deposit", new Date(c.clock.now().getTime() + 70_000)), { instanceOf: AssertionError });
  t.is(res.body.expiresAt, new Date(c.clock.now().getTime() + 60_000).toISOString());

  t.is((await api(c, "POST", "/api/cli/assertions", { token, body: { audience: "somewhere" } })).status, 400);
  t.is((await api(c, "POST", "/api/cli/assertions", { token: "not-a-session", body: { audience: "deposit" } })).status, 401);
  // The CLI session is bound to the account: a role changed meanwhile is what the next assertion says.
  await c.console.context.db("operators").where({ email: "ops@example.com" }).update({ role: "viewer" });
  const lowered = await api(c, "POST", "/api/cli/assertions", { token, body: { audience: "payout" } });
  t.is((await verifyAssertion(c.publicKey, lowered.body.assertion as string, "payout", c.clock.now())).role, "viewer");

  // Signing out ends the token.
  t.is((await api(c, "DELETE", "/api/cli/sessions", { token })).status, 204);
  t.is((await api(c, "POST", "/api/cli/assertions", { token, body: { audience: "deposit" } })).status, 401);
});

test("a CLI session ends 12 hours after sign-in", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const token = await cliToken(c, email, password);
  c.clock.advance(12 * 3600_000 - 1000);
  t.is((await api(c, "POST", "/api/cli/assertions", { token, body: { audience: "console" } })).status, 200);
  c.clock.advance(1000);
  t.is((await api(c, "POST", "/api/cli/assertions", { token, body: { audience: "console" } })).status, 401);
});

test("the sign-in API takes JSON only: a form post (what another site can send) is refused", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const res = await fetch(`${c.url}/api/cli/sessions`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ email, password }).toString() });
  t.is(res.status, 415);
});

test("operatorAssertionInterceptor puts the operator's assertion for the called service on each call", async (t) => {
  const c = await testConsole(t);
  const signer = c.console.assertionsFor({ email: "ops@example.com", displayName: "Ops", role: "support" });
  const seen: { header?: string | null } = {};
  const transport = createRouterTransport(
    (router) => {
      router.service(DepositService, {
        getDeposit(_req, context) {
          seen.header = context.requestHeader.get(OPERATOR_ASSERTION_HEADER);
          throw new Error("only the header matters here");
        },
      });
    },
    { transport: { interceptors: [operatorAssertionInterceptor(signer)] } },
  );
  await t.throwsAsync(() => createClient(DepositService, transport).getDeposit({}));
  t.truthy(seen.header);
  const identity = await verifyAssertion(c.publicKey, seen.header ?? "", "deposit", c.clock.now());
  t.is(identity.subject, "ops@example.com");
  t.is(identity.kind, "human");
});
