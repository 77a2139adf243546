import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { formatMoney, formatTime, parseMoney } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import type { Language } from "./i18n.js";
import { codeText, fieldText } from "./service-texts.js";
import type { ServiceName } from "../service-clients.js";
import type { ConsoleContextKoa } from "../state.js";

/**
 * What pages of both sides read from a request and write into an answer: ids, cursors, query
 * texts, Türkiye days, amounts, links, redirects, times and the words of a refusal's detail.
 * Nothing here knows who is signed in.
 */

/** The five services, as the shared operator services (audit, approvals) are asked for each. */
export const SERVICES: readonly ServiceName[] = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"];

export function isServiceName(value: unknown): value is ServiceName {
  return typeof value === "string" && (SERVICES as readonly string[]).includes(value);
}

/**
 * What a refusal says after its opening words. English pages: the service's own detail, as it
 * wrote it. Turkish pages: its code in Turkish (the service's reason, else the gRPC code), with
 * the field it named; the service's English sentence is not shown.
 */
export function refusalDetail(lang: Language, info: { code: Code; reason?: string | undefined; field?: string | undefined; message: string }): string {
  if (lang === "en") return info.message;
  const words = codeText(lang, info.reason ?? Code[info.code]);
  return info.field ? `${words} (${fieldText(lang, info.field)})` : words;
}

/** Money in the smallest unit as the page's language writes it (`₺1.234,50`, `TRY 1,234.50`): shared/format.ts. */
export function money(amount: bigint | number, currency: string, lang: Language): string {
  return formatMoney(amount, currency, lang);
}

export { formatTime };

/** A `<time>` with the machine-readable instant; nothing when unset. */
export function timeOf(at: Timestamp | undefined, lang: Language): SafeHtml | null {
  if (!at) return null;
  const date = timestampDate(at);
  return html`<time datetime="${date.toISOString()}">${formatTime(date, lang)}</time>`;
}

/** An opaque cursor a service issued, carried through a link: only its own alphabet gets through. */
export function cursorParam(value: unknown): string {
  return typeof value === "string" && /^[A-Za-z0-9_=.:+/-]{1,2000}$/.test(value) ? value : "";
}

/** A query parameter as one trimmed string ('' when absent or repeated oddly). */
export function queryText(value: unknown, max = 200): string {
  return typeof value === "string" ? value.trim().slice(0, max) : "";
}

/** The ids services hand out (`dep_…`, `wdr_…`, `trf_…`, merchant ids): their alphabet only. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;

/** A day (YYYY-MM-DD) in Türkiye's time (UTC+3 all year) at its start. */
export function dayStart(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const date = new Date(`${value}T00:00:00+03:00`);
  // A day no calendar has (2026-02-30) is refused, not rolled into the next month.
  return Number.isNaN(date.getTime()) || new Date(date.getTime() + 3 * 3600_000).toISOString().slice(0, 10) !== value ? undefined : date;
}

/** The start of the day after `value`: a "to" day is taken whole. */
export function dayAfter(value: string): Date | undefined {
  const start = dayStart(value);
  return start ? new Date(start.getTime() + 86_400_000) : undefined;
}

/** An amount a person typed in lira, Türkiye's way or the English way (`1.250,75`, `1250,75`, `1250.75`), as kuruş; undefined when it is not one (shared/format.ts `parseMoney`). */
export function minorUnits(text: string, lang: Language): bigint | undefined {
  return parseMoney(text, lang);
}

/** A path with its query (empty values left out). */
export function linkTo(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) query.set(k, v);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** After a change: a redirect (303) to the page that shows it, so a reload does not repeat it. */
export function seeOther(ctx: ConsoleContextKoa, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}

/** Lines or commas: the allowed IPs and CIDRs as typed (the merchant service normalises and validates them). */
export function ipList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}
