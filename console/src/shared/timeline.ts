import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { CallbackEvent } from "@payments/contracts/callback";
import type { AuditRecord } from "@payments/contracts/operator";
import { deliveryStatusFromProto } from "@payments/contracts/statuses";
import { html, type SafeHtml } from "./html.js";
import type { Language } from "./i18n.js";
import { formatTime } from "./format.js";
import { eventTypeText, outcomeText, roleText, rpcText, statusText, type StatusKind } from "./service-texts.js";

/*
 * One payment's timeline, for the operators' deposit and withdrawal pages and the merchant's
 * payment page alike: when it was created, each status change the merchant was told of (its
 * callback events), what operators did about it (their audit, operators' pages only) and when it
 * finished, oldest first; every status, action and outcome in the page's language.
 */

const TEXTS = {
  en: {
    title: "Timeline",
    caption: "What happened, oldest first",
    when: "When",
    what: "What",
    by: "By",
    detail: "Detail",
    created: "Created",
    change: "Status changed: {status} (event {sequence})",
    finished: "Finished: {status}",
    askedBy: "asked by {maker}",
    approval: "approval {id}",
  },
  tr: {
    title: "Zaman çizelgesi",
    caption: "Olanlar, en eskisi önce",
    when: "Ne zaman",
    what: "Ne oldu",
    by: "Yapan",
    detail: "Ayrıntı",
    created: "Oluşturuldu",
    change: "Durum değişti: {status} (olay {sequence})",
    finished: "Sonuçlandı: {status}",
    askedBy: "isteyen: {maker}",
    approval: "{id} onayı",
  },
} as const;

type Key = keyof (typeof TEXTS)["en"];

export function timelineText(lang: Language, key: Key, params: Record<string, string> = {}): string {
  return TEXTS[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => params[name] ?? whole);
}

export interface TimelineEntry {
  at: Timestamp | undefined;
  what: string;
  /** Who acted (an operator's line); the merchant's timeline has no such column. */
  by?: string | undefined;
  detail?: SafeHtml | string | undefined;
}

function timeCell(at: Timestamp | undefined, lang: Language): SafeHtml | string {
  if (!at) return "—";
  const date = timestampDate(at);
  return html`<time datetime="${date.toISOString()}">${formatTime(date, lang)}</time>`;
}

/**
 * The timeline's section, oldest first. `withBy`: the operators' column of who acted. `note`: a
 * line above the table (the audit could not be read). The table scrolls sideways in its own
 * focusable box on a narrow screen.
 */
export function timelineSection(lang: Language, entries: readonly TimelineEntry[], options: { withBy?: boolean; note?: SafeHtml | null } = {}): SafeHtml {
  const t = (key: Key) => timelineText(lang, key);
  const ms = (e: TimelineEntry) => (e.at ? timestampDate(e.at).getTime() : 0);
  const sorted = [...entries].sort((a, b) => ms(a) - ms(b));
  const by = options.withBy === true;
  const table = html`<table><caption>${t("caption")}</caption>
<thead><tr><th scope="col">${t("when")}</th><th scope="col">${t("what")}</th>${by ? html`<th scope="col">${t("by")}</th>` : null}<th scope="col">${t("detail")}</th></tr></thead>
<tbody>${sorted.map((e) => html`<tr><td>${timeCell(e.at, lang)}</td><td>${e.what}</td>${by ? html`<td>${e.by || "—"}</td>` : null}<td>${e.detail ?? "—"}</td></tr>`)}</tbody></table>`;
  return html`<section aria-labelledby="h-timeline"><h2 id="h-timeline">${t("title")}</h2>
${options.note ?? null}
<div class="table-scroll" role="region" aria-label="${t("caption")}" tabindex="0">${table}</div></section>`;
}

/** The line of the payment's creation. */
export function createdEntry(lang: Language, at: Timestamp | undefined, detail?: string): TimelineEntry {
  return { at, what: timelineText(lang, "created"), detail };
}

/** The line of the payment's end, with its final status. */
export function finishedEntry(lang: Language, at: Timestamp | undefined, kind: StatusKind, status: string, detail?: string): TimelineEntry {
  return { at, what: timelineText(lang, "finished", { status: statusText(lang, kind, status) }), detail };
}

/** The status changes merchants were told of, each with how its callback fared. */
export function eventEntries(lang: Language, events: readonly CallbackEvent[]): TimelineEntry[] {
  return events.map((e) => ({
    at: e.createdAt,
    what: timelineText(lang, "change", { status: eventTypeText(lang, e.type), sequence: String(e.sequence) }),
    detail: statusText(lang, "delivery", deliveryStatusFromProto(e.deliveryStatus) ?? "unknown"),
  }));
}

/** What operators did (refused attempts too: the audit keeps them), each action and outcome in words. */
export function auditEntries(lang: Language, records: readonly AuditRecord[]): TimelineEntry[] {
  return records.map((r) => ({
    at: r.at,
    what: rpcText(lang, r.rpc),
    by: `${r.actor}${r.role ? ` (${roleText(lang, r.role)})` : ""}${r.maker ? `, ${timelineText(lang, "askedBy", { maker: r.maker })}` : ""}`,
    detail: html`<span class="${r.outcome === "ok" ? "ok" : "bad"}">${outcomeText(lang, r.outcome)}</span>${r.reason ? html` · ${r.reason}` : null}${r.approvalId ? html` · <a href="${`/approvals/${r.service}/${r.approvalId}`}">${timelineText(lang, "approval", { id: r.approvalId })}</a>` : null}`,
  }));
}
