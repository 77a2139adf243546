import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import { DepositStatus } from "@payments/contracts/deposit";
import { csrfOf } from "./harness.js";
import { newMerchant, signedInMerchantUser } from "./merchant-harness.js";
import { startStack, type Stack } from "./service-harness.js";

let stack: Stack;
let receiver: Server;
let receiverUrl = "";
const received: Array<{ headers: Record<string, unknown>; body: string }> = [];

test.before(async () => {
  // Test events go to a receiver on this machine: the callback-sender allows loopback only when told.
  stack = await startStack({ serviceEnv: { CALLBACK_ALLOW_PRIVATE: "1" } });
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(418, { "content-type": "text/plain" });
      res.end("<b>teapot</b> says no");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
test.after.always(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  await stack.stop();
});

async function pendingDeposit(merchantId: string, n: number) {
  const { deposit } = await stack.deposits.createDeposit({ merchantId, processId: `dev-order-${n}`, amount: 15_000n, customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

test("the owner rotates the primary key's secret on its page: shown once on a no-store answer, never on the page again; the old one is revoked; a developer rotates the webhook secret", async (t) => {
  const merchantId = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, merchantId, "owner@dev-secrets.test", "owner");
  const before = (await stack.merchants.getMerchant({ merchantId })).merchant!;
  const oldSecret = before.secrets[0]!.id;
  const page = await owner.get("/merchant/developers?lang=en");
  t.is(page.status, 200);
  t.regex(page.html, new RegExp(before.apiKey));
  t.regex(page.html, /Primary key/);
  const keyPage = await owner.get(`/merchant/developers/keys/${before.apiKey}?lang=en`);
  t.is(keyPage.status, 200);
  t.regex(keyPage.html, /its secret also signs your callbacks/);
  const rotated = await owner.post(`/merchant/developers/keys/${before.apiKey}/rotate-secret`, { _csrf: csrfOf(page.html), grace: "3600" });
  t.is(rotated.status, 200, rotated.html);
  t.is(rotated.headers.get("cache-control"), "no-store");
  const secret = /<dd><code>(sk_[^<]+)<\/code><\/dd>/.exec(rotated.html)?.[1];
  t.truthy(secret);
  t.regex(rotated.html, /shown only this once/);
  const after = (await stack.merchants.getMerchant({ merchantId })).merchant!;
  t.is(after.secrets.length, 2);
  t.truthy(after.secrets.find((s) => s.id === oldSecret)?.expiresAt, "the old one has a grace period");
  t.notRegex((await owner.get("/merchant/developers")).html, new RegExp(secret!.replace(/[^A-Za-z0-9]/g, ".")));
  t.notRegex((await owner.get(`/merchant/developers/keys/${before.apiKey}`)).html, new RegExp(secret!.replace(/[^A-Za-z0-9]/g, ".")));

  // A grace period that is not offered is refused, nothing rotated.
  t.is((await owner.post(`/merchant/developers/keys/${before.apiKey}/rotate-secret`, { _csrf: csrfOf(page.html), grace: "999" })).status, 400);
  t.is((await stack.merchants.getMerchant({ merchantId })).merchant!.secrets.length, 2);

  const revoked = await owner.post(`/merchant/developers/secrets/${oldSecret}/revoke`, { _csrf: csrfOf(page.html) });
  t.is(revoked.status, 200, revoked.html);
  t.false((await stack.merchants.getMerchant({ merchantId })).merchant!.secrets.find((s) => s.id === oldSecret)!.valid);

  const dev = await signedInMerchantUser(stack, merchantId, "dev@dev-secrets.test", "developer");
  const webhook = await dev.post("/merchant/developers/rotate-webhook-secret", { _csrf: csrfOf((await dev.get("/merchant/developers")).html), grace: "0" });
  t.is(webhook.status, 200);
  t.is(webhook.headers.get("cache-control"), "no-store");
  t.regex(webhook.html, /whsec_/);
});

test("IPs, callback URL, and a test event that shows the receiver's status, time and escaped body", async (t) => {
  const merchantId = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, merchantId, "owner@dev-settings.test", "owner");
  const csrf = csrfOf((await owner.get("/merchant/developers?lang=en")).html);
  const ips = await owner.post("/merchant/developers/allowed-ips", { _csrf: csrf, allowedIps: "203.0.113.5\n10.0.0.0/8" });
  t.is(ips.status, 303, ips.html);
  t.deepEqual((await stack.merchants.getMerchant({ merchantId })).merchant!.allowedIps, ["203.0.113.5", "10.0.0.0/8"]);
  const badIps = await owner.post("/merchant/developers/allowed-ips", { _csrf: csrf, allowedIps: "not an address" });
  t.is(badIps.status, 400);
  t.is((await stack.merchants.getMerchant({ merchantId })).merchant!.allowedIps.length, 2);

  const url = await owner.post("/merchant/developers/callback-url", { _csrf: csrf, callbackUrl: receiverUrl });
  t.is(url.status, 303, url.html);
  t.is((await stack.merchants.getMerchant({ merchantId })).merchant!.callbackUrl, receiverUrl);

  const sent = await owner.post("/merchant/developers/test-event", { _csrf: csrf });
  t.is(sent.status, 200, sent.html);
  t.regex(sent.html, /418/);
  t.regex(sent.html, /\d+ ms/);
  t.regex(sent.html, /&lt;b&gt;teapot&lt;\/b&gt; says no/, "the receiver's body, escaped");
  t.notRegex(sent.html, /<b>teapot/);
  t.true(received.some((r) => r.body.includes('"test"')));
});

test("the event log lists the merchant's callback events, filtered by delivery status, linking the payment", async (t) => {
  const merchantId = await newMerchant(stack);
  await stack.merchants.setCallbackUrl({ merchantId, callbackUrl: receiverUrl });
  const deposit = await pendingDeposit(merchantId, 1);
  await stack.deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id });
  const viewer = await signedInMerchantUser(stack, merchantId, "viewer@dev-events.test", "viewer");
  let html = "";
  for (let i = 0; i < 50 && !html.includes(deposit.id); i++) {
    html = (await viewer.get("/merchant/developers/events?lang=en")).html;
    if (!html.includes(deposit.id)) await new Promise((r) => setTimeout(r, 100));
  }
  t.regex(html, new RegExp(`/merchant/deposits/${deposit.id}`));
  t.regex(html, /deposit\.completed/);
  const delivered = await viewer.get("/merchant/developers/events?status=delivered");
  t.is(delivered.status, 200);
  t.notRegex(delivered.html, new RegExp(deposit.id), "the receiver answers 418: nothing delivered");
});

test("sandbox tools pay and expire the merchant's own deposits; another merchant's deposit id is 404 with nothing changed", async (t) => {
  const merchantId = await newMerchant(stack);
  const other = await newMerchant(stack);
  const dev = await signedInMerchantUser(stack, merchantId, "dev@dev-sandbox.test", "developer");
  const csrf = csrfOf((await dev.get("/merchant/developers?lang=en")).html);
  const mine = await pendingDeposit(merchantId, 2);
  const paid = await dev.post("/merchant/developers/sandbox/pay", { _csrf: csrf, depositId: mine.id, amount: "150", senderName: "AYSE YILMAZ" });
  t.is(paid.status, 200, paid.html);
  t.is((await stack.deposits.getDeposit({ merchantId, key: { case: "depositId", value: mine.id } })).deposit!.status, DepositStatus.COMPLETED);

  const toExpire = await pendingDeposit(merchantId, 3);
  t.is((await dev.post("/merchant/developers/sandbox/expire", { _csrf: csrf, depositId: toExpire.id })).status, 200);
  t.is((await stack.deposits.getDeposit({ merchantId, key: { case: "depositId", value: toExpire.id } })).deposit!.status, DepositStatus.EXPIRED);

  const theirs = await pendingDeposit(other, 4);
  const refused = await dev.post("/merchant/developers/sandbox/pay", { _csrf: csrf, depositId: theirs.id });
  t.is(refused.status, 404, refused.html);
  t.is((await dev.post("/merchant/developers/sandbox/expire", { _csrf: csrf, depositId: theirs.id })).status, 404);
  t.is((await stack.deposits.getDeposit({ merchantId: other, key: { case: "depositId", value: theirs.id } })).deposit!.status, DepositStatus.PENDING);
  t.is((await dev.post("/merchant/developers/sandbox/pay", { _csrf: csrf, depositId: "../x" })).status, 400);
});

test("a live merchant's page says the sandbox tools are sandbox-only, and the service refuses them", async (t) => {
  const merchantId = await newMerchant(stack, { sandbox: false });
  const dev = await signedInMerchantUser(stack, merchantId, "dev@dev-live.test", "developer");
  const page = await dev.get("/merchant/developers?lang=en");
  t.regex(page.html, /sandbox merchants only/);
  t.notRegex(page.html, /action="\/merchant\/developers\/sandbox\/pay"/);
  const deposit = await pendingDeposit(merchantId, 5);
  const res = await dev.post("/merchant/developers/sandbox/pay", { _csrf: csrfOf(page.html), depositId: deposit.id });
  t.true(res.status >= 400, `${res.status}`);
  t.is((await stack.deposits.getDeposit({ merchantId, key: { case: "depositId", value: deposit.id } })).deposit!.status, DepositStatus.PENDING);
});

test("a viewer sees the page read-only, finance manages keys but not the settings; neither acts on settings by replay; no CSRF token is 403", async (t) => {
  const merchantId = await newMerchant(stack);
  const viewer = await signedInMerchantUser(stack, merchantId, "viewer@dev-roles.test", "viewer");
  const finance = await signedInMerchantUser(stack, merchantId, "finance@dev-roles.test", "finance");
  const dev = await signedInMerchantUser(stack, merchantId, "dev@dev-roles.test", "developer");
  const viewerPage = await viewer.get("/merchant/developers?lang=en");
  t.regex(viewerPage.html, /owners and developers change it/);
  t.notRegex(viewerPage.html, /action="\/merchant\/developers\/keys"/, "no key form for a viewer");
  const financePage = await finance.get("/merchant/developers?lang=en");
  t.regex(financePage.html, /You manage API keys here/);
  t.regex(financePage.html, /action="\/merchant\/developers\/keys"/);
  for (const [who, page] of [[viewer, viewerPage], [finance, financePage]] as const) {
    t.is(page.status, 200);
    const csrf = csrfOf(page.html);
    t.is((await who.post("/merchant/developers/callback-url", { _csrf: csrf, callbackUrl: "https://evil.example/" })).status, 403);
    t.is((await who.post("/merchant/developers/allowed-ips", { _csrf: csrf, allowedIps: "0.0.0.0/0" })).status, 403);
  }
  t.is((await viewer.post("/merchant/developers/rotate-secret", { _csrf: csrfOf(viewerPage.html), grace: "0" })).status, 403);
  t.is((await viewer.post("/merchant/developers/keys", { _csrf: csrfOf(viewerPage.html), label: "v", scope_read: "1" })).status, 403);
  t.is((await dev.post("/merchant/developers/callback-url", { callbackUrl: "https://evil.example/" })).status, 403);
  const m = (await stack.merchants.getMerchant({ merchantId })).merchant!;
  t.is(m.secrets.length, 1);
  t.is(m.callbackUrl, "");
  t.deepEqual(m.allowedIps, []);
  t.is((await stack.merchants.listApiKeys({ merchantId })).keys.length, 1, "no key was made");
});
