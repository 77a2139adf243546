import test from "ava";
import { isMysql } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { merchantSignIn, merchantUserAccount, newMerchant } from "./merchant-harness.js";
import { postFrom, startStack, type Stack } from "./service-harness.js";

// The last owner is kept under concurrency too: on MariaDB, two owners removing (or demoting)
// each other at the same moment never leave the team without an owner.
let stack: Stack;
let drop: () => Promise<void>;

test.before(async () => {
  const database = await createTestDatabase();
  drop = () => database.drop();
  stack = await startStack({ consoleEnv: { CONSOLE_DATABASE_URL: database.url, LOG_LEVEL: "warn" } });
});
test.after.always(async () => {
  await (stack as Stack | undefined)?.stop();
  await drop();
});

test("two owners removing or demoting each other at once: exactly one change is made, one owner stays (MariaDB)", async (t) => {
  t.true(isMysql(stack.c.console.context.db), "the console runs on MariaDB here");
  for (const [round, action] of ["remove", "role", "remove", "role"].entries()) {
    const merchantId = await newMerchant(stack);
    const a = await merchantUserAccount(stack, merchantId, `a${round}@race.test`, "owner");
    const b = await merchantUserAccount(stack, merchantId, `b${round}@race.test`, "owner");
    const [asA, asB] = await Promise.all([merchantSignIn(stack, a.email), merchantSignIn(stack, b.email)]);
    const form: Record<string, string> = action === "role" ? { role: "viewer" } : {};
    const answers = await Promise.all([
      postFrom(asA.browser, "/merchant/team", `/merchant/team/${b.id}/${action}`, form),
      postFrom(asB.browser, "/merchant/team", `/merchant/team/${a.id}/${action}`, form),
    ]);
    // The loser is refused LAST_OWNER (409); or, when the winner's change landed before its request
    // was read, it is no owner any more (403) or no longer signed in (303 to /merchant/sign-in).
    // Either way only one change is made.
    const done = answers.filter((r) => r.status === 303 && r.location?.startsWith("/merchant/team?done=")).length;
    const refused = answers.filter((r) => r.status === 409 || r.status === 403 || (r.status === 303 && r.location === "/merchant/sign-in")).length;
    t.deepEqual([done, refused], [1, 1], `${action}: ${answers.map((r) => `${r.status} ${r.location ?? ""}`).join(", ")}`);
    const owners = await stack.c.console.context.db("merchant_users").where({ merchant_id: merchantId, role: "owner", disabled: false }).count({ n: "*" }).first();
    t.is(Number((owners as { n: number | string }).n), 1, `${action}: one owner stays`);
  }
});
