import test from "ava";
import { ApprovalService, ApprovalStatus } from "@payments/contracts/operator";
import { TransferStatus } from "@payments/contracts/deposit";
import { createServiceClient } from "@payments/testing";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";
import type { Browser } from "./harness.js";

let stack: Stack;
let maker: Browser;
stackForTests(test, async (s) => {
  stack = s;
  maker = await signedInAs(stack.c, "fin-maker@example.com", "finance");
});

const approvalOf = async (id: string) => (await createServiceClient(ApprovalService, stack.services.server.url, { service: "deposit" }).getApproval({ id })).approval!;

/** A live transfer finance asked to return through the console: the id of the approval that waits. */
async function askedReturn(): Promise<{ approvalId: string; transferId: string; status: TransferStatus }> {
  const deposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, deposit, 2_500n, "unknown payment");
  const res = await postFrom(maker, `/transfers/${stray.id}`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "no such order", iban: "", recipientName: "" });
  const approvalId = new URL(res.location!, stack.c.url).searchParams.get("approval");
  if (!approvalId) throw new Error(`no approval: ${res.status}`);
  return { approvalId, transferId: stray.id, status: stray.status };
}

test.serial("a viewer sees the waiting approval in the inbox and its exact request, without a way to decide", async (t) => {
  const { approvalId, transferId } = await askedReturn();
  const viewer = await signedInAs(stack.c, "viewer-appr@example.com", "viewer");
  const inbox = await viewer.get("/approvals?lang=en");
  t.is(inbox.status, 200);
  t.true(inbox.html.includes(`href="/approvals/deposit/${approvalId}"`));
  t.true(inbox.html.includes("<caption>Everything that waits for a second person (the five services and the console&#39;s account changes), newest first</caption>"));
  const detail = await viewer.get(`/approvals/deposit/${approvalId}?lang=en`);
  t.is(detail.status, 200);
  t.true(detail.html.includes("The exact request"));
  t.true(detail.html.includes(`&quot;transferId&quot;: &quot;${transferId}&quot;`));
  // A viewer replaying an approval: the service refuses (its role rule) and it still waits.
  const replay = await postFrom(viewer, `/approvals/deposit/${approvalId}?lang=en`, `/approvals/deposit/${approvalId}/approve`, { note: "replayed" });
  t.is(replay.status, 403);
  t.regex(replay.html, /The service refused: your role may not do this/);
  t.is((await approvalOf(approvalId)).status, ApprovalStatus.PENDING);
});

test.serial("the maker sees their own as waiting for someone else, and the service refuses their approval; no CSRF token, no decision", async (t) => {
  const { approvalId, transferId, status } = await askedReturn();
  const own = await maker.get(`/approvals/deposit/${approvalId}?lang=en`);
  t.true(own.html.includes("You asked for this. A second person must approve it; you may only withdraw it."));
  t.false(own.html.includes(`/approvals/deposit/${approvalId}/approve`));
  const forced = await postFrom(maker, `/approvals/deposit/${approvalId}`, `/approvals/deposit/${approvalId}/approve`, { note: "me again" });
  t.is(forced.status, 403);
  const other = await signedInAs(stack.c, "fin-nocsrf@example.com", "finance");
  t.is((await other.post(`/approvals/deposit/${approvalId}/approve`, { note: "no token" })).status, 403);
  t.is((await approvalOf(approvalId)).status, ApprovalStatus.PENDING);
  t.is((await stack.deposits.getTransfer({ transferId })).transfer!.status, status);
});

test.serial("a second finance operator approves: the return runs; another is rejected with a reason (and a rejection needs one)", async (t) => {
  const { approvalId, transferId } = await askedReturn();
  const second = await signedInAs(stack.c, "fin-second@example.com", "finance");
  const res = await postFrom(second, `/approvals/deposit/${approvalId}`, `/approvals/deposit/${approvalId}/approve`, { note: "checked the bank portal" });
  t.is(res.status, 303);
  const shown = await second.get(`${res.location!}&lang=en`);
  t.true(shown.html.includes("You approved it"));
  t.like(await approvalOf(approvalId), { status: ApprovalStatus.APPROVED, outcome: "ok", decidedBy: "fin-second@example.com" });
  t.true([TransferStatus.RETURNING, TransferStatus.RETURNED].includes((await stack.deposits.getTransfer({ transferId })).transfer!.status));

  const next = await askedReturn();
  const noReason = await postFrom(second, `/approvals/deposit/${next.approvalId}?lang=en`, `/approvals/deposit/${next.approvalId}/reject`, { reason: "" });
  t.is(noReason.status, 400);
  t.true(noReason.html.includes('aria-invalid="true"'));
  const rejected = await postFrom(second, `/approvals/deposit/${next.approvalId}`, `/approvals/deposit/${next.approvalId}/reject`, { reason: "the customer asked to keep it" });
  t.is(rejected.status, 303);
  t.is((await approvalOf(next.approvalId)).status, ApprovalStatus.REJECTED);
  t.is((await stack.deposits.getTransfer({ transferId: next.transferId })).transfer!.status, next.status);
});
