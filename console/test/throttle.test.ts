import test from "ava";
import { api, operatorWithPassword, signedInBrowser, testConsole } from "./harness.js";

test("after 5 failed sign-ins an account is refused for 15 minutes (429), even with the right password; the attempts are recorded", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  for (let i = 0; i < 5; i++) t.is((await api(c, "POST", "/api/cli/sessions", { body: { email, password: "wrong password guess" } })).status, 401);
  const blocked = await api(c, "POST", "/api/cli/sessions", { body: { email, password } });
  t.is(blocked.status, 429);
  t.is((blocked.body.error as { code: string }).code, "THROTTLED");
  const retryAfter = Number(blocked.headers.get("retry-after"));
  t.true(retryAfter > 800 && retryAfter <= 900, String(retryAfter));
  // The page refuses it too, saying so.
  const page = await signedInBrowser(c, email, password);
  t.is(page.status, 429);
  const events = await c.console.context.db("sign_in_events").where({ email }).whereNot({ event: "password_set" }).orderBy("id").select<Array<{ event: string; reason: string | null }>>("event", "reason");
  t.deepEqual(
    events.map((e) => e.event),
    ["sign_in_failed", "sign_in_failed", "sign_in_failed", "sign_in_failed", "sign_in_failed", "sign_in_throttled", "sign_in_throttled"],
  );
  t.is(events[0]?.reason, "bad_password");
});

test("after 20 failed sign-ins from one IP, over any accounts, that IP is refused", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  for (let i = 0; i < 20; i++) t.is((await api(c, "POST", "/api/cli/sessions", { body: { email: `nobody${i % 4}@example.com`, password: "wrong password guess" } })).status, 401);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: { email, password } })).status, 429);
});

// The owner's own typos at their address: a success there clears that (account, address) count and
// makes the address known, where the account-wide count (other places' guesses) no longer locks them.
test("a successful sign-in clears the account's failures at that address", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 4; i++) await api(c, "POST", "/api/cli/sessions", { body: { email, password: "wrong password guess" } });
    t.is((await api(c, "POST", "/api/cli/sessions", { body: { email, password } })).status, 201);
  }
});
