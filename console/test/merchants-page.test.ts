import test from "ava";
import { MerchantStatus } from "@payments/contracts/merchant";
import { merchantDeposit, postFrom, signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

const merchantOf = async (id: string) => (await stack.merchants.getMerchant({ merchantId: id })).merchant!;
const secretOf = (html: string, label: string) => new RegExp(`<dt>${label}</dt><dd><code>([^<]+)</code>`).exec(html)?.[1];

test.serial("an admin adds a merchant: the API key, secret and webhook secret are shown once, never cached, and not on the merchant's page after", async (t) => {
  const admin = await signedInAs(stack.c, "admin-m@example.com", "admin");
  const res = await postFrom(admin, "/merchants?lang=en", "/merchants", { name: "Kitap Evi", displayName: "Kitap Evi A.Ş.", callbackUrl: "", allowedIps: "203.0.113.7\n198.51.100.0/24", kind: "sandbox" });
  t.is(res.status, 201);
  t.is(res.headers.get("cache-control"), "no-store");
  const id = secretOf(res.html, "Merchant id")!;
  const apiKey = secretOf(res.html, "API key")!;
  const apiSecret = secretOf(res.html, "API secret")!;
  const webhookSecret = secretOf(res.html, "Webhook secret")!;
  t.truthy(id && apiKey && apiSecret && webhookSecret);
  t.true(webhookSecret.startsWith("whsec_"));
  const again = await admin.get(`/merchants/${id}?lang=en`);
  t.is(again.status, 200);
  for (const secret of [apiKey, apiSecret, webhookSecret]) t.false(again.html.includes(secret), "a secret is shown only once");
  t.true(again.html.includes("203.0.113.7"));
  t.true(!(await admin.get("/merchants")).html.includes(apiSecret));
});

test.serial("an admin rotates the API secret and the webhook secret: each new one is shown once and never again", async (t) => {
  const { merchant } = await stack.merchants.createMerchant({ name: "Rotate Shop", sandbox: true });
  const admin = await signedInAs(stack.c, "admin-rot@example.com", "admin");
  const rotated = await postFrom(admin, `/merchants/${merchant!.id}?lang=en`, `/merchants/${merchant!.id}/rotate-secret`, {});
  t.is(rotated.status, 200);
  t.is(rotated.headers.get("cache-control"), "no-store");
  const secret = secretOf(rotated.html, "API secret")!;
  t.truthy(secret);
  const webhook = await postFrom(admin, `/merchants/${merchant!.id}?lang=en`, `/merchants/${merchant!.id}/rotate-webhook-secret`, {});
  const whsec = secretOf(webhook.html, "Webhook secret")!;
  t.true(whsec.startsWith("whsec_"));
  const page = await admin.get(`/merchants/${merchant!.id}`);
  t.false(page.html.includes(secret));
  t.false(page.html.includes(whsec));
});

test.serial("an admin changes the settings the service offers; a switch to live waits for a second admin and the merchant stays sandbox", async (t) => {
  const { merchant } = await stack.merchants.createMerchant({ name: "Settings Shop", sandbox: true });
  const id = merchant!.id;
  const admin = await signedInAs(stack.c, "admin-set@example.com", "admin");
  const post = (action: string, form: Record<string, string>) => postFrom(admin, `/merchants/${id}`, `/merchants/${id}/${action}`, form);
  t.is((await post("callback-url", { callbackUrl: "https://shop.example.com/callback" })).status, 303);
  t.is((await post("display-name", { displayName: "Ayarlar Mağazası" })).status, 303);
  t.is((await post("allowed-ips", { allowedIps: "192.0.2.1" })).status, 303);
  t.is((await post("rate-limit", { perSecond: "7", burst: "20" })).status, 303);
  t.is((await post("payment-rules", { underpayment: "complete", overpayment: "review", latePayment: "return" })).status, 303);
  t.is((await post("status", { status: "disabled" })).status, 303);
  const m = await merchantOf(id);
  t.is(m.callbackUrl, "https://shop.example.com/callback");
  t.is(m.displayName, "Ayarlar Mağazası");
  t.deepEqual(m.allowedIps, ["192.0.2.1"]);
  t.is(m.rateLimitPerSecond, 7);
  t.is(m.status, MerchantStatus.DISABLED);
  const live = await post("sandbox", { kind: "live" });
  t.is(live.status, 303);
  const approvalId = new URL(live.location!, stack.c.url).searchParams.get("approval");
  t.truthy(approvalId);
  const shown = await admin.get(`${live.location!}&lang=en`);
  t.true(shown.html.includes(`href="/approvals/merchant/${approvalId}"`));
  t.true((await merchantOf(id)).sandbox);
});

test.serial("a viewer sees merchants without settings; an operator's change is refused by the service (403) and a viewer's replay too, nothing changes; a post without the CSRF token is refused", async (t) => {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const id = deposit.merchantId;
  const before = await merchantOf(id);
  const viewer = await signedInAs(stack.c, "viewer-m@example.com", "viewer");
  const list = await viewer.get("/merchants?lang=en");
  t.is(list.status, 200);
  t.true(list.html.includes(`href="/merchants/${id}"`));
  t.false(list.html.includes('action="/merchants"'), "no create form for a viewer");
  const page = await viewer.get(`/merchants/${id}?lang=tr`);
  t.is(page.status, 200);
  t.false(page.html.includes(`action="/merchants/${id}/display-name"`));
  for (const [email, role] of [["ops-m@example.com", "operator"], ["viewer-m2@example.com", "viewer"]] as const) {
    const browser = await signedInAs(stack.c, email, role);
    const res = await postFrom(browser, `/merchants/${id}?lang=en`, `/merchants/${id}/display-name`, { displayName: "Hijacked" });
    t.is(res.status, 403, role);
    t.regex(res.html, /role="alert">The service refused: your role may not do this/);
    t.is((await postFrom(browser, "/merchants?lang=en", "/merchants", { name: "Nope", kind: "sandbox" })).status, 403);
    const rotate = await postFrom(browser, `/merchants/${id}`, `/merchants/${id}/rotate-secret`, {});
    t.is(rotate.status, 403);
  }
  const admin = await signedInAs(stack.c, "admin-m-csrf@example.com", "admin");
  t.is((await admin.post(`/merchants/${id}/display-name`, { displayName: "No token" })).status, 403);
  const after = await merchantOf(id);
  t.is(after.displayName, before.displayName);
  t.deepEqual(after.secrets.map((s) => s.id), before.secrets.map((s) => s.id));
});

test.serial("a live merchant asked for on the page waits for a second admin; the maker cannot approve it; the approver is shown its key and secrets once (no-store), and nothing keeps them", async (t) => {
  const maker = await signedInAs(stack.c, "admin-live@example.com", "admin");
  const asked = await postFrom(maker, "/merchants?lang=en", "/merchants", { name: "Canlı Dükkan", displayName: "", callbackUrl: "", allowedIps: "", kind: "live" });
  t.is(asked.status, 303);
  const approvalId = new URL(asked.location!, stack.c.url).searchParams.get("approval");
  if (!approvalId) throw new Error(`no approval in ${asked.location}`);
  const waiting = await maker.get(`${asked.location!}&lang=en`);
  t.regex(waiting.html, /A live merchant waits for a second admin: whoever approves it is shown its API key, API secret and webhook secret, once\./);
  t.true(waiting.html.includes(`href="/approvals/merchant/${approvalId}"`));
  const named = async () => (await stack.merchants.listMerchants({ pageSize: 100 })).merchants.filter((m) => m.name === "Canlı Dükkan");
  t.deepEqual(await named(), [], "not made yet");

  // The maker is refused (the service's rule), and shown nothing secret.
  const own = await postFrom(maker, `/approvals/merchant/${approvalId}?lang=en`, `/approvals/merchant/${approvalId}/approve`, { note: "me" });
  t.is(own.status, 403);
  t.deepEqual(await named(), []);

  const second = await signedInAs(stack.c, "admin-live-2@example.com", "admin");
  const approved = await postFrom(second, `/approvals/merchant/${approvalId}?lang=en`, `/approvals/merchant/${approvalId}/approve?lang=en`, { note: "checked the contract" });
  t.is(approved.status, 200);
  t.is(approved.headers.get("cache-control"), "no-store");
  t.regex(approved.html, /the live merchant is made\. Its secrets are shown to you alone, now, and never again/);
  const id = secretOf(approved.html, "Merchant id")!;
  const apiKey = secretOf(approved.html, "API key")!;
  const apiSecret = secretOf(approved.html, "API secret")!;
  const webhookSecret = secretOf(approved.html, "Webhook secret")!;
  t.true(webhookSecret.startsWith("whsec_"));
  const made = await merchantOf(id);
  t.false(made.sandbox);
  t.is(made.apiKey, apiKey);
  // Never again: not on the approval's page (its stored answer has them left out), nor the merchant's.
  for (const path of [`/approvals/merchant/${approvalId}?lang=en`, `/merchants/${id}?lang=en`]) {
    const again = await second.get(path);
    t.is(again.status, 200);
    for (const secret of [apiSecret, webhookSecret]) t.false(again.html.includes(secret), path);
  }
});
