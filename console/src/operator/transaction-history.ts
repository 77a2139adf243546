import { CallbackService, DeliveryStatus, type CallbackEvent } from "@payments/contracts/callback";
import { AuditService, type AuditRecord } from "@payments/contracts/operator";
import { deliveryStatusFromProto } from "@payments/contracts/statuses";
import { html, type SafeHtml } from "../shared/html.js";
import type { Language } from "../shared/i18n.js";
import { alert } from "../shared/layout.js";
import type { ServiceName } from "../service-clients.js";
import { attemptErrorText, eventTypeText, statusText } from "../shared/service-texts.js";
import { auditEntries as sharedAuditEntries, eventEntries as sharedEventEntries, timelineSection as sharedTimeline, type TimelineEntry } from "../shared/timeline.js";
import { refusalOf, timeOf, type Refusal, type SignedIn } from "./operator-call.js";

export function deliveryText(who: SignedIn, status: DeliveryStatus): string {
  return statusText(who.lang, "delivery", deliveryStatusFromProto(status) ?? "unknown");
}

/** Every callback event of one transaction (at most a page of 100: a transaction has a handful of status changes). */
export async function eventsOf(who: SignedIn, transactionId: string): Promise<CallbackEvent[] | Refusal> {
  try {
    return (await who.client(CallbackService).listEvents({ allMerchants: true, transactionId, limit: 100 })).events;
  } catch (err) {
    return refusalOf(err, who.t);
  }
}

/** What operators did about `targetId` in `service`, newest first (one page of 100). */
export async function auditOf(who: SignedIn, service: ServiceName, targetId: string): Promise<AuditRecord[] | Refusal> {
  try {
    return (await who.client(AuditService, service).listAuditRecords({ targetId, limit: 100 })).records;
  } catch (err) {
    return refusalOf(err, who.t);
  }
}

/** The attempts of one callback event: when, where, the answer, how long, why not delivered. */
export function attemptsTable(who: SignedIn, event: CallbackEvent): SafeHtml {
  if (event.attempts.length === 0) return html`<p>${who.t("event.noAttempts")}</p>`;
  return html`<table><caption>${who.t("event.attemptsOf", { id: event.id })}</caption>
<thead><tr><th scope="col" class="num">#</th><th scope="col">${who.t("event.attemptedAt")}</th><th scope="col">${who.t("event.url")}</th><th scope="col" class="num">${who.t("event.statusCode")}</th><th scope="col" class="num">${who.t("event.latency")}</th><th scope="col">${who.t("event.outcome")}</th><th scope="col">${who.t("event.answer")}</th></tr></thead>
<tbody>${event.attempts.map(
    (a) => html`<tr><td class="num">${a.number}</td><td>${timeOf(a.attemptedAt, who.lang)}</td><td>${a.url ? html`<code>${a.url}</code>` : "—"}</td><td class="num">${a.statusCode || "—"}</td><td class="num">${a.latencyMs} ms</td><td class="${a.outcome === "delivered" ? "ok" : a.outcome === "failed" ? "bad" : ""}">${statusText(who.lang, "attempt", a.outcome)}</td><td>${a.error ? attemptErrorText(who.lang, a.error) : "—"}</td></tr>`,
  )}</tbody></table>`;
}

/** A transaction's callbacks: each status change sent to the merchant, with every attempt. */
export function callbacksSection(who: SignedIn, events: CallbackEvent[] | Refusal): SafeHtml {
  const heading = html`<h2>${who.t("history.callbacks")}</h2>`;
  if (!Array.isArray(events)) return html`${heading}${alert(events.message)}`;
  if (events.length === 0) return html`${heading}<p>${who.t("history.noCallbacks")}</p>`;
  return html`${heading}${events.map(
    (e) => html`<section aria-labelledby="${`ev-${e.id}`}" class="card">
<h3 id="${`ev-${e.id}`}"><a href="${`/events/${e.id}`}">${eventTypeText(who.lang, e.type)}</a> · ${deliveryText(who, e.deliveryStatus)}</h3>
<p>${who.t("event.changedAt")}: ${timeOf(e.createdAt, who.lang)}${e.deliveredAt ? html` · ${who.t("event.deliveredAt")}: ${timeOf(e.deliveredAt, who.lang)}` : null}${e.nextAttemptAt ? html` · ${who.t("event.nextAttempt")}: ${timeOf(e.nextAttemptAt, who.lang)}` : null}</p>
${attemptsTable(who, e)}
</section>`,
  )}`;
}

export type { TimelineEntry };

/** The shared timeline (shared/timeline.ts), with the operators' "by" column and a line when the audit could not be read. */
export function timelineSection(who: SignedIn, entries: TimelineEntry[], auditRefusal: Refusal | undefined): SafeHtml {
  const note = auditRefusal ? html`<p class="bad">${who.t("history.auditUnavailable", { detail: auditRefusal.message })}</p>` : null;
  return sharedTimeline(who.lang, entries, { withBy: true, note });
}

/** Timeline lines of the status changes merchants were told of. */
export function eventEntries(who: SignedIn, events: CallbackEvent[] | Refusal): TimelineEntry[] {
  return Array.isArray(events) ? sharedEventEntries(who.lang, events) : [];
}

/** Timeline lines of what operators did (refused attempts too: the audit keeps them), in the page's language. */
export function auditEntries(records: AuditRecord[] | Refusal, lang: Language): TimelineEntry[] {
  return Array.isArray(records) ? sharedAuditEntries(lang, records) : [];
}
