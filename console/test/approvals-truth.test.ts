import test from "ava";
import { ApprovalService, ApprovalStatus } from "@payments/contracts/operator";
import { createServiceClient } from "@payments/testing";
import { api, serviceAdminToken, type Browser } from "./harness.js";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";

// Four-eyes that tells the truth (issue 33): the same match sent twice is one approval, shown to
// the second operator as waiting (whose it is); the decision forms give way while it waits; the
// maker gets no Approve button; approving says what the run really did, a refusal included; and
// the inbox holds the services' approvals and the console's account changes together.

let stack: Stack;
let opA: Browser;
let opB: Browser;
let approver: Browser;
// Any live transfer above 10.00 TRY matched by hand waits for a second operator.
stackForTests(
  test,
  async (s) => {
    stack = s;
    opA = await signedInAs(stack.c, "ops-a@example.com", "operator");
    opB = await signedInAs(stack.c, "ops-b@example.com", "operator");
    approver = await signedInAs(stack.c, "ops-c@example.com", "operator");
  },
  { serviceEnv: { APPROVAL_THRESHOLD: "1000" } },
);

const approvals = () => createServiceClient(ApprovalService, stack.services.server.url, { service: "deposit" });
const pendingFor = async (targetId: string) => (await approvals().listApprovals({ status: ApprovalStatus.PENDING, targetId })).approvals;
const approvalIn = (location: string | null) => new URL(location ?? "/", stack.c.url).searchParams.get("approval");

async function match(browser: Browser, transferId: string, depositId: string, reason: string) {
  return postFrom(browser, `/transfers/${transferId}`, `/transfers/${transferId}/resolve`, { decision: "match", depositId, reason });
}

test.serial("the same match sent by two operators is one approval; the second is shown it waits and whose it is; the forms give way; approving one says it ran, the other that the service refused", async (t) => {
  const deposit = await merchantDeposit(stack);
  const other = await merchantDeposit(stack);
  const stray = await reportTo(stack, deposit, 2_500n, "unknown payment", "KEMAL SUNAL");
  const first = await match(opA, stray.id, deposit.id, "the customer called");
  t.is(first.status, 303);
  const id = approvalIn(first.location);
  t.truthy(id);
  const second = await match(opB, stray.id, deposit.id, "the bank's letter says so");
  t.is(second.status, 303);
  t.is(approvalIn(second.location), id, "the second operator is sent to the approval that waits");
  t.deepEqual(
    (await pendingFor(stray.id)).map((a) => [a.id, a.maker]),
    [[id, "ops-a@example.com"]],
  );

  // Where the forms were: the approval, who asked and when; no form to decide again.
  const seenByB = await opB.get(`/transfers/${stray.id}?lang=en`);
  t.regex(seenByB.html, /This waits for a second person&#39;s approval \(.*\), asked by ops-a@example\.com at /);
  t.true(seenByB.html.includes(`href="/approvals/deposit/${id}"`));
  t.false(seenByB.html.includes('name="decision"'), "no decision form while it waits");
  const seenByA = await opA.get(`/transfers/${stray.id}?lang=tr`);
  t.true(seenByA.html.includes("Bunu"));
  t.true(seenByA.html.includes("tarihinde siz istediniz"));

  // The maker: no Approve button, a line saying a second person must, withdraw only.
  const own = await opA.get(`/approvals/deposit/${id}?lang=en`);
  t.true(own.html.includes("You asked for this. A second person must approve it; you may only withdraw it."));
  t.false(own.html.includes(`action="/approvals/deposit/${id}/approve"`));
  t.true(own.html.includes(`action="/approvals/deposit/${id}/reject"`));
  t.true(own.html.includes("Withdraw my request"));

  // A match to another deposit is another request (replayed past the hidden forms): a second approval.
  const elsewhere = await match(opB, stray.id, other.id, "no, it is the other order");
  const otherId = approvalIn(elsewhere.location);
  t.truthy(otherId);
  t.not(otherId, id);

  const ran = await postFrom(approver, `/approvals/deposit/${id}`, `/approvals/deposit/${id}/approve`, { note: "checked" });
  t.is(ran.status, 303);
  const ranPage = await approver.get(`${ran.location!}&lang=en`);
  t.regex(ranPage.html, /role="status">You approved it and it ran: Match transfer /);

  const refused = await postFrom(approver, `/approvals/deposit/${otherId!}`, `/approvals/deposit/${otherId!}/approve`, { note: "checked too" });
  t.is(refused.status, 303);
  const refusedPage = await approver.get(`${refused.location!}&lang=en`);
  t.regex(refusedPage.html, /role="alert">You approved it, but the service refused to run it: The transfer is no longer open\./);
  t.false(refusedPage.html.includes("You approved it and it ran"));
  t.like((await approvals().getApproval({ id: otherId! })).approval, { status: ApprovalStatus.APPROVED, outcome: "TRANSFER_NOT_OPEN" });
  const inTurkish = await approver.get(`/approvals/deposit/${otherId!}?done=approve&lang=tr`);
  t.true(inTurkish.html.includes("Onayladınız, ancak servis çalıştırmayı reddetti: Havale artık açık değil."));
  // Decided: the forms are back to what the transfer's state allows (none: it is matched).
  t.false((await opB.get(`/transfers/${stray.id}?lang=en`)).html.includes("This waits for a second person"));
});

test.serial("the inbox holds the services' approvals and the console's account changes in one list, and the home page counts both", async (t) => {
  const admin = await signedInAs(stack.c, "admin-inbox@example.com", "admin");
  const deposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, deposit, 3_000n, "another unknown payment", "KEMAL SUNAL");
  const asked = await match(opA, stray.id, deposit.id, "the customer called");
  const serviceId = approvalIn(asked.location)!;
  const change = await api(stack.c, "POST", "/api/operators", { token: await serviceAdminToken(stack.c, "some-admin-bot"), body: { email: "new-viewer@example.com", displayName: "New Viewer", role: "viewer" } });
  t.is(change.status, 202);
  const consoleId = (change.body.approval as { id: string }).id;

  const inbox = await admin.get("/approvals?lang=en");
  t.is(inbox.status, 200);
  const table = /<table>[\s\S]*?<\/table>/.exec(inbox.html)?.[0] ?? "";
  t.true(table.includes(`href="/approvals/deposit/${serviceId}"`));
  t.true(table.includes(`href="/approvals/console/${consoleId}"`));
  t.true(table.includes("Console (account change)"));
  t.true(table.includes("Deposit service"));
  t.true(table.replace(/<[^>]+>/g, "").includes("New operator account new-viewer@example.com, role viewer"));
  // An operator who is not an admin sees the services' only: the console's are admins' to decide.
  const opInbox = await opB.get("/approvals?lang=en");
  t.true(opInbox.html.includes(`href="/approvals/deposit/${serviceId}"`));
  t.false(opInbox.html.includes(`/approvals/console/${consoleId}`));

  const services = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"];
  const counts = await Promise.all(services.map(async (service) => (await createServiceClient(ApprovalService, stack.services.server.url, { service }).listApprovals({ status: ApprovalStatus.PENDING, limit: 100 })).approvals.length));
  const waiting = counts.reduce((a, b) => a + b, 0);
  const home = await admin.get("/?lang=en");
  t.regex(home.html, new RegExp(`Approvals waiting</a></th>\\s*<td[^>]*>${waiting + 1}</td>`));
  const opHome = await opB.get("/?lang=en");
  t.regex(opHome.html, new RegExp(`Approvals waiting</a></th>\\s*<td[^>]*>${waiting}</td>`));
});

test.serial("a deposit's confirm and reject forms give way while its confirmation waits for a second operator", async (t) => {
  const deposit = await merchantDeposit(stack);
  const asked = await postFrom(opA, `/deposits/${deposit.id}`, `/deposits/${deposit.id}/confirm`, { amount: "", transferId: "" });
  t.is(asked.status, 303);
  const id = approvalIn(asked.location);
  t.truthy(id);
  const page = await opB.get(`/deposits/${deposit.id}?lang=en`);
  t.regex(page.html, /This waits for a second person&#39;s approval \(.*\), asked by ops-a@example\.com at /);
  t.true(page.html.includes(`href="/approvals/deposit/${id!}"`));
  t.false(page.html.includes(`action="/deposits/${deposit.id}/confirm"`));
  t.false(page.html.includes(`action="/deposits/${deposit.id}/reject"`));
  await approvals().reject({ id: id!, reason: "not yet" }).catch(() => undefined);
});
