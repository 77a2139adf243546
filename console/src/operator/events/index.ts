import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CallbackService, DeliveryStatus, type CallbackEvent } from "@payments/contracts/callback";
import { DELIVERY_STATUSES, deliveryStatusToProto, isDeliveryStatusName } from "@payments/contracts/statuses";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { csrfField, cursorParam, linkTo, operatorRoute, pager, queryText, type Refusal, readOne, refusalOf, seeOther, type SignedIn, timeOf, workPage } from "../operator-call.js";
import { attemptsTable, deliveryText } from "../transaction-history.js";
import { merchantNamed, merchantSelect, Names } from "../directory.js";
import { sandboxFilter } from "../../shared/mode.js";
import { eventTypeText } from "../../shared/service-texts.js";

const PAGE_SIZE = 50;

/** An event carries no mode of its own: the list shows both, each with its merchant's mode now. */
const TEXTS = {
  en: { mode: "Merchant's mode now", modeNote: "Callbacks are not split by mode (an event does not say which it was): each shows its merchant's mode now." },
  tr: { mode: "Üye işyerinin şimdiki modu", modeNote: "Bildirimler moda göre ayrılmaz (bir olay hangisi olduğunu söylemez): her biri üye işyerinin şimdiki modunu gösterir." },
} as const;

function modeCell(who: SignedIn, names: Names, merchantId: string): string {
  const m = names.merchant(merchantId);
  return m ? who.t(m.sandbox ? "kind.sandbox" : "kind.live") : "—";
}

/** `datetime-local` in Türkiye's time (UTC+3), as the page says. */
function localTime(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return undefined;
  const date = new Date(`${value.length === 16 ? `${value}:00` : value}+03:00`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function transactionLink(e: CallbackEvent): string {
  return e.type.startsWith("withdrawal.") ? `/withdrawals/${e.transactionId}` : `/deposits/${e.transactionId}`;
}

function redeliverFailedForm(who: SignedIn, names: Names, sandbox: boolean, form: Record<string, string>, refusal?: Refusal): SafeHtml | null {
  if (!roleAtLeast(who.operator.role, "support")) return null;
  const err = (...names: string[]) => (refusal?.field && names.includes(refusal.field) ? refusal.message : undefined);
  return html`<form method="post" action="/events/redeliver-failed" class="card" aria-labelledby="h-redeliver-failed">
<h2 id="h-redeliver-failed">${who.t("events.redeliverFailed")}</h2>${csrfField(who)}
<p class="hint">${who.t("events.redeliverFailedHint")}</p>
${merchantSelect(names, { id: "rf-merchant", name: "merchant", label: who.t("list.merchant"), required: true, value: form.merchant ?? "", lang: who.lang, sandboxFirst: sandbox, error: err("merchant_id", "merchant") })}
${field({ id: "rf-since", name: "since", label: who.t("events.since"), type: "datetime-local", required: true, value: form.since ?? "", hint: who.t("audit.timeHint"), error: err("since") })}
<button type="submit">${who.t("events.redeliverFailed")}</button>
</form>`;
}

function eventsTable(who: SignedIn, names: Names, events: CallbackEvent[]): SafeHtml {
  return html`<table><caption>${who.t("events.caption")}</caption>
<thead><tr><th scope="col">${who.t("events.event")}</th><th scope="col">${who.t("events.type")}</th><th scope="col">${who.t("list.merchant")}</th><th scope="col">${TEXTS[who.lang].mode}</th><th scope="col">${who.t("events.transaction")}</th><th scope="col">${who.t("event.changedAt")}</th><th scope="col">${who.t("events.delivery")}</th><th scope="col" class="num">${who.t("events.attempts")}</th></tr></thead>
<tbody>${events.map(
    (e) =>
      html`<tr><td><a href="${`/events/${e.id}`}">${e.id}</a></td><td>${eventTypeText(who.lang, e.type)}</td><td>${merchantNamed(names, e.merchantId)}</td><td>${modeCell(who, names, e.merchantId)}</td><td><a href="${transactionLink(e)}">${e.transactionId}</a></td><td>${timeOf(e.createdAt, who.lang)}</td><td class="${e.deliveryStatus === DeliveryStatus.FAILED ? "bad" : e.deliveryStatus === DeliveryStatus.DELIVERED ? "ok" : ""}">${deliveryText(who, e.deliveryStatus)}</td><td class="num">${e.attempts.length}</td></tr>`,
  )}</tbody></table>`;
}

/**
 * Callback events: the list (one merchant or all, by delivery status) paged by the
 * callback-sender's cursor; one event with its body and every attempt; a redelivery of it, and
 * of a merchant's failed events since a time (support's, as the service decides).
 */
export function eventPages(deps: ConsoleContext): ConsoleRoute[] {
  const showList = async (ctx: ConsoleContextKoa, who: SignedIn, banner: SafeHtml | null, form: Record<string, string>, refusal?: Refusal, status = 200) => {
    const merchant = queryText(ctx.query.merchant, 80);
    const delivery = queryText(ctx.query.delivery, 20);
    const cursor = cursorParam(ctx.query.cursor);
    const sandbox = sandboxFilter(ctx.state.mode);
    const listing = who
      .client(CallbackService)
      .listEvents({
        ...(merchant ? { merchantId: merchant } : { allMerchants: true }),
        deliveryStatus: isDeliveryStatusName(delivery) ? deliveryStatusToProto(delivery) : DeliveryStatus.UNSPECIFIED,
        limit: PAGE_SIZE,
        cursor,
      })
      .catch((err: unknown) => refusalOf(err, who.t));
    const [names, res] = await Promise.all([Names.of(deps, who), listing]);
    await names.ensure({ merchants: [merchant, form.merchant ?? "", ...("events" in res ? res.events.map((e) => e.merchantId) : [])] });
    const filters = html`<form method="get" action="/events" class="filters" role="search" aria-label="${who.t("list.search")}">
<div>${merchantSelect(names, { id: "field-merchant", name: "merchant", label: who.t("list.merchant"), value: merchant, lang: who.lang, sandboxFirst: sandbox })}</div>
<div><label for="field-delivery">${who.t("events.delivery")}</label>
<select id="field-delivery" name="delivery"><option value="">${who.t("list.anyStatus")}</option>${DELIVERY_STATUSES.map((d) => html`<option value="${d}"${d === delivery ? html` selected` : null}>${who.t(`event.delivery.${d}`)}</option>`)}</select></div>
<div><button type="submit">${who.t("list.searchButton")}</button></div></form>`;
    let list: SafeHtml;
    if ("message" in res) {
      list = alert(res.message) ?? html``;
      status = status === 200 ? res.status : status;
    } else {
      list = res.events.length === 0 ? html`<p>${who.t("list.empty")}</p>` : html`${eventsTable(who, names, res.events)}${pager(who, "/events", { merchant, delivery }, cursor, res.nextCursor)}`;
    }
    workPage(ctx, who, { title: who.t("events.title"), body: html`${banner}${refusal ? alert(refusal.message) : null}<p>${who.t("events.intro")}</p>${filters}<p class="hint">${TEXTS[who.lang].modeNote}</p>${list}${redeliverFailedForm(who, names, sandbox, form, refusal)}` }, status);
  };

  const showEvent = async (ctx: ConsoleContextKoa, who: SignedIn, id: string, banner: SafeHtml | null, refusal?: Refusal, status = 200) => {
    const title = who.t("event.title", { id });
    const back = html`<p><a href="/events">${who.t("events.back")}</a></p>`;
    const event = await readOne(ctx, who, { title, back, id }, async () => (await who.client(CallbackService).getEvent({ allMerchants: true, eventId: id })).event);
    if (!event) return;
    const e = event;
    const names = await (await Names.of(deps, who)).ensure({ merchants: [e.merchantId] });
    const redeliver = roleAtLeast(who.operator.role, "support")
      ? html`<form method="post" action="${`/events/${e.id}/redeliver`}" class="card" aria-labelledby="h-redeliver"><h2 id="h-redeliver">${who.t("event.redeliver")}</h2>${csrfField(who)}<p class="hint">${who.t("event.redeliverHint")}</p><button type="submit">${who.t("event.redeliver")}</button></form>`
      : null;
    workPage(
      ctx,
      who,
      {
        title,
        body: html`${banner}${refusal ? alert(refusal.message) : null}<p><a href="${linkTo("/events", { merchant: e.merchantId })}">${who.t("events.back")}</a></p>
<dl class="facts card">
<dt>${who.t("events.type")}</dt><dd>${eventTypeText(who.lang, e.type)} <code>${e.type}</code></dd>
<dt>${who.t("list.merchant")}</dt><dd>${merchantNamed(names, e.merchantId)} · ${modeCell(who, names, e.merchantId)}</dd>
<dt>${who.t("events.transaction")}</dt><dd><a href="${transactionLink(e)}">${e.transactionId}</a> (#${String(e.sequence)})</dd>
<dt>${who.t("events.delivery")}</dt><dd>${deliveryText(who, e.deliveryStatus)}</dd>
<dt>${who.t("event.changedAt")}</dt><dd>${timeOf(e.createdAt, who.lang)}</dd>
<dt>${who.t("event.deliveredAt")}</dt><dd>${timeOf(e.deliveredAt, who.lang) ?? "—"}</dd>
<dt>${who.t("event.nextAttempt")}</dt><dd>${timeOf(e.nextAttemptAt, who.lang) ?? "—"}</dd>
</dl>
<h2>${who.t("event.body")}</h2><pre>${e.bodyJson}</pre>
<h2>${who.t("events.attempts")}</h2>${attemptsTable(who, e)}
${redeliver}`,
      },
      status,
    );
  };

  return [
    operatorRoute(deps, { method: "GET", path: "/events" }, async (ctx, who) => {
      const count = queryText(ctx.query.redelivered, 6);
      await showList(ctx, who, /^\d+$/.test(count) ? notice(who.t("events.redeliveredCount", { n: count })) : null, {});
    }),
    operatorRoute(deps, { method: "POST", path: "/events/redeliver-failed" }, async (ctx, who) => {
      const form = ctx.state.form ?? {};
      const merchantId = (form.merchant ?? "").trim();
      const since = localTime((form.since ?? "").trim());
      if (!merchantId || !since) {
        const refusal: Refusal = { status: 400, message: who.t(merchantId ? "audit.badTime" : "events.merchantRequired"), reason: "VALIDATION_ERROR", field: merchantId ? "since" : "merchant_id", approvalId: undefined };
        return showList(ctx, who, null, form, refusal, 400);
      }
      try {
        const res = await who.client(CallbackService).redeliverFailedEvents({ merchantId, since: timestampFromDate(since) });
        seeOther(ctx, linkTo("/events", { merchant: merchantId, redelivered: String(res.count) }));
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        await showList(ctx, who, null, form, refusal, refusal.status);
      }
    }),
    operatorRoute(deps, { method: "GET", path: "/events/:id", ids: ["id"] }, async (ctx, who, { id }) => {
      await showEvent(ctx, who, id, ctx.query.done === "redeliver" ? notice(who.t("event.redelivered")) : null);
    }),
    operatorRoute(deps, { method: "POST", path: "/events/:id/redeliver", ids: ["id"] }, async (ctx, who, { id }) => {
      try {
        await who.client(CallbackService).redeliverEvent({ allMerchants: true, eventId: id });
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        return showEvent(ctx, who, id, null, refusal, refusal.status);
      }
      seeOther(ctx, `/events/${id}?done=redeliver`);
    }),
  ];
}
