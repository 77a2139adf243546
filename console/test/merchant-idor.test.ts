import test from "ava";
import { ApprovalService } from "@payments/contracts/operator";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { createServiceClient, eventually, testMerchantUser } from "@payments/testing";
import { merchantRoutes } from "../src/merchant/index.js";
import type { Browser } from "./harness.js";
import { csrfOf } from "./harness.js";
import { merchantUserAccount, newMerchant, signedInMerchantUser } from "./merchant-harness.js";
import { startStack, type Stack } from "./service-harness.js";

// Issue 24's IDOR walk: every page and action of the merchant dashboard (from its route table),
// as merchant A's owner, with merchant B's ids in every place an id goes (path and form): each
// answers 404, and nothing of B's changes.
let stack: Stack;
let a: string;
let b: string;
let ownerA: Browser;
const ids: Record<string, string> = {};

test.before(async () => {
  // Retries an hour apart: no delivery attempt of the services' own lands during the walk.
  stack = await startStack({ serviceEnv: { CALLBACK_RETRY_SCHEDULE: "1h,1h" } });
  a = await newMerchant(stack);
  b = await newMerchant(stack, { name: "Shop B" });
  // B has no callback URL: its events wait with no attempt of their own, so any attempt or state change in the walk would be the walk's.
  const paid = (await stack.deposits.createDeposit({ merchantId: b, processId: "b-paid", amount: 90_000n, customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } })).deposit!;
  await stack.deposits.sandboxPayDeposit({ merchantId: b, depositId: paid.id });
  const pending = (await stack.deposits.createDeposit({ merchantId: b, processId: "b-pending", amount: 10_000n, customer: { id: "c2", name: "Can Demir", username: "can" } })).deposit!;
  const gatewayPayouts = createServiceClient(PayoutService, stack.services.server.url, { operator: null, merchant: b });
  await eventually(async () => ((await gatewayPayouts.getBalances({ merchantId: b })).balances.find((x) => x.currency === "TRY")?.available ?? 0n) >= 90_000n, "B credited");
  const withdrawal = (await gatewayPayouts.createWithdrawal({ merchantId: b, processId: "bw-1", amount: 1_000n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" })).withdrawal!;
  const event = (await stack.callbacks.listEvents({ merchantId: b })).events[0];
  // A pending approval of B's own four-eyes.
  const url = stack.services.server.url;
  await createServiceClient(MerchantService, url, { operator: testMerchantUser(b, "owner"), approver: null }).setWithdrawalApproval({ threshold: 2_000n });
  const asked = await createServiceClient(PayoutService, url, { operator: testMerchantUser(b, "finance"), approver: null })
    .createWithdrawal({ processId: "bw-2", amount: 5_000n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" })
    .catch((err: { metadata?: Headers }) => err);
  const details = (asked as { metadata?: Headers }).metadata?.get("x-error-details");
  const userB = await merchantUserAccount(stack, b, "dev@b.example.com", "developer");
  const merchantB = (await stack.merchants.getMerchant({ merchantId: b })).merchant!;
  Object.assign(ids, {
    merchant: b,
    deposit: pending.id,
    paidDeposit: paid.id,
    withdrawal: withdrawal.id,
    event: event?.id ?? "",
    approval: details ? (JSON.parse(details) as { approvalId: string }).approvalId : "",
    user: userB.id,
    secret: merchantB.secrets[0]?.id ?? "",
  });
  ownerA = await signedInMerchantUser(stack, a, "owner@a.example.com", "owner");
});

test.after.always(async () => {
  await (stack as Stack | undefined)?.stop();
});

/** What B has, read as our operators: equal before and after = nothing of B's changed. */
async function stateOfB(): Promise<string> {
  const url = stack.services.server.url;
  const [merchant, deposits, withdrawals, events, balances, approvals, users] = await Promise.all([
    stack.merchants.getMerchant({ merchantId: b }),
    stack.deposits.listDeposits({ merchantId: b, limit: 100 }),
    stack.payouts.listWithdrawals({ merchantId: b, limit: 100 }),
    stack.callbacks.listEvents({ merchantId: b, limit: 100 }),
    stack.payouts.getBalances({ merchantId: b }),
    createServiceClient(ApprovalService, url, { operator: testMerchantUser(b, "owner"), service: "payout" }).listApprovals({}),
    stack.c.console.context.db("merchant_users").where({ merchant_id: b }).orderBy("id").select(),
  ]);
  const eventAttempts = await Promise.all(events.events.map((e) => stack.callbacks.getEvent({ merchantId: b, eventId: e.id })));
  return JSON.stringify({ merchant, deposits, withdrawals, events, eventAttempts, balances, approvals, users }, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/** Every form field name an action might read an id from, each given one of B's ids. */
function formWithIdsOfB(csrf: string, id: string): Record<string, string> {
  const names = ["id", "merchant", "merchantId", "merchant_id", "deposit", "depositId", "withdrawal", "withdrawalId", "event", "eventId", "approval", "approvalId", "user", "userId", "secret", "secretId", "transactionId"];
  return { _csrf: csrf, ...Object.fromEntries(names.map((n) => [n, id])), amount: "10", reason: "test", note: "test", role: "viewer", senderName: "X" };
}

test.serial("every merchant page and action with B's ids, as A's owner: 404, and nothing of B's changes", async (t) => {
  // Signing out is no action on a thing (and would end A's session mid-walk).
  const routes = merchantRoutes(stack.c.console.context).filter((r) => r.access === "merchant" && !r.path.endsWith("/sign-out"));
  t.true(routes.length >= 10, `the dashboard's routes: ${routes.length}`);
  const withParams = routes.filter((r) => r.path.includes(":"));
  t.true(withParams.length >= 3, "pages of one thing (deposit, withdrawal, user…)");
  const csrf = csrfOf((await ownerA.get("/merchant")).html);
  const before = await stateOfB();
  let tried = 0;
  for (const route of routes) {
    for (const [kind, id] of Object.entries(ids)) {
      if (id === "") continue;
      const path = route.path.replace(/:(\w+)/g, () => encodeURIComponent(id));
      const res = route.method === "GET" ? await ownerA.get(path) : await ownerA.post(path, formWithIdsOfB(csrf, id));
      tried++;
      if (route.path.includes(":")) t.is(res.status, 404, `${route.method} ${route.path} with B's ${kind}: ${res.status}`);
      else t.not(res.status, 500, `${route.method} ${route.path} with B's ${kind} in the form`);
      t.false(res.html.includes(id) && kind !== "merchant" && res.status < 400 && route.method === "GET" && route.path.includes(":"), `${route.path} shows nothing of B's`);
    }
  }
  t.is(await stateOfB(), before, "nothing of B's changed");
  t.true(tried > 50);
});

test.serial("the lists and the export of A show nothing of B's, whatever the query names", async (t) => {
  for (const path of [`/merchant/payments?merchant=${b}&merchantId=${b}`, `/merchant/payments?kind=withdrawals&merchantId=${b}`, `/merchant/payments.csv?merchantId=${b}`, `/merchant/developers?merchantId=${b}`]) {
    const res = await ownerA.get(path);
    t.true(res.status === 200 || res.status === 404, `${path}: ${res.status}`);
    for (const [kind, id] of Object.entries(ids)) if (id && kind !== "merchant") t.false(res.html.includes(id), `${path} shows B's ${kind}`);
  }
});
