import test from "ava";
import type { CallbackEvent } from "@payments/contracts/callback";
import { AuditService } from "@payments/contracts/operator";
import { createServiceClient, eventually } from "@payments/testing";
import { merchantDeposit, postFrom, signedInAs, type Stack, stackForTests, viewerSees } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

/** A sandbox deposit paid, and the callback event of its completion. */
async function completedEvent(): Promise<CallbackEvent> {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  await stack.deposits.sandboxPayDeposit({ allMerchants: true, depositId: deposit.id });
  let event: CallbackEvent | undefined;
  await eventually(async () => {
    event = (await stack.callbacks.listEvents({ allMerchants: true, transactionId: deposit.id, limit: 10 })).events[0];
    return event !== undefined;
  }, "the completion's callback event");
  return event!;
}

const redeliveries = async (actor: string) =>
  (await createServiceClient(AuditService, stack.services.server.url, { service: "callback-sender" }).listAuditRecords({ actor, limit: 50 })).records.filter((r) => r.rpc.endsWith("/RedeliverEvent") || r.rpc.endsWith("/RedeliverFailedEvents"));

test.serial("a viewer sees the callback events, filtered by merchant and delivery, and one event with its body and attempts, without the redelivery", async (t) => {
  const event = await completedEvent();
  const { viewer, list } = await viewerSees(t, stack, "viewer-ev@example.com", `/events?merchant=${event.merchantId}&lang=en`, `/events/${event.id}`);
  t.true(list.html.includes("deposit: completed"), "the event's type in words");
  t.false(list.html.includes('action="/events/redeliver-failed"'));
  const delivered = await viewer.get(`/events?merchant=${event.merchantId}&delivery=delivered`);
  t.false(delivered.html.includes(`href="/events/${event.id}"`), "no callback URL: never delivered");
  const detail = await viewer.get(`/events/${event.id}?lang=tr`);
  t.is(detail.status, 200);
  t.true(detail.html.includes("Gönderilen gövde"));
  t.false(detail.html.includes(`action="/events/${event.id}/redeliver"`));
  const deposit = await viewer.get(`/deposits/${event.transactionId}?lang=en`);
  t.true(deposit.html.includes(`href="/events/${event.id}"`), "the deposit's page lists its callbacks");
});

test.serial("names first: each event's merchant by name with its mode now, a select of merchants by name that filters, also in the redelivery form", async (t) => {
  const event = await completedEvent();
  const other = await completedEvent();
  const name = (await stack.merchants.getMerchant({ merchantId: event.merchantId })).merchant!.name;
  const support = await signedInAs(stack.c, "support-ev-names@example.com", "support");
  const all = await support.get("/events?lang=en");
  t.true(all.html.includes(`<a href="/merchants/${event.merchantId}">${name}</a> <small><code class="id">${event.merchantId}</code></small>`));
  t.regex(all.html, /<th scope="col">Merchant&#39;s mode now<\/th>/);
  t.regex(all.html, new RegExp(`<code class="id">${event.merchantId}</code></small></td><td[^>]*>Sandbox</td>`), "the merchant's mode beside it");
  t.regex(all.html, /<select[^>]* id="field-merchant" name="merchant"><option value="">Every merchant<\/option>/);
  t.true(all.html.includes(`<option value="${event.merchantId}">${name} (${event.merchantId})</option>`));
  t.regex(all.html, /<select[^>]* id="rf-merchant" name="merchant" required>/, "the redelivery names its merchant from the list too");

  const chosen = await support.get(`/events?merchant=${event.merchantId}&lang=tr`);
  t.true(chosen.html.includes(`href="/events/${event.id}"`));
  t.false(chosen.html.includes(`href="/events/${other.id}"`), "the select filters by the merchant chosen");
  t.true(chosen.html.includes(`<option value="${event.merchantId}" selected>`));
  t.true(chosen.html.includes("Üye işyerinin şimdiki modu") && chosen.html.includes("Tüm üye işyerleri"));
  const detail = await support.get(`/events/${event.id}?lang=en`);
  t.true(detail.html.includes(`<a href="/merchants/${event.merchantId}">${name}</a>`), "the event's page names its merchant");
});

test.serial("support redelivers one event and a merchant's failed ones since a time", async (t) => {
  const event = await completedEvent();
  const support = await signedInAs(stack.c, "support-ev@example.com", "support");
  const res = await postFrom(support, `/events/${event.id}`, `/events/${event.id}/redeliver`, {});
  t.is(res.status, 303);
  t.is(res.location, `/events/${event.id}?done=redeliver`);
  const failed = await postFrom(support, "/events", "/events/redeliver-failed", { merchant: event.merchantId, since: "2020-01-01T00:00" });
  t.is(failed.status, 303);
  t.regex(failed.location ?? "", /^\/events\?merchant=.+&redelivered=\d+$/);
  t.true((await redeliveries("support-ev@example.com")).some((r) => r.outcome === "ok"));
});

test.serial("a viewer replaying a redelivery gets the service's 403 and nothing is redelivered; a post without the CSRF token is refused", async (t) => {
  const event = await completedEvent();
  const viewer = await signedInAs(stack.c, "viewer-ev-replay@example.com", "viewer");
  const res = await postFrom(viewer, `/events/${event.id}?lang=en`, `/events/${event.id}/redeliver`, {});
  t.is(res.status, 403);
  t.regex(res.html, /role="alert">The service refused: your role may not do this/);
  const bulk = await postFrom(viewer, "/events", "/events/redeliver-failed", { merchant: event.merchantId, since: "2020-01-01T00:00" });
  t.is(bulk.status, 403);
  const support = await signedInAs(stack.c, "support-ev-csrf@example.com", "support");
  t.is((await support.post(`/events/${event.id}/redeliver`, {})).status, 403);
  t.false((await redeliveries("viewer-ev-replay@example.com")).some((r) => r.outcome === "ok"));
  t.is((await redeliveries("support-ev-csrf@example.com")).length, 0, "refused before the service was asked");
});
