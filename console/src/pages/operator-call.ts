import type { DescService } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { errorInfo } from "@payments/kit";
import type { Operator } from "../auth/operators.js";
import type { Session } from "../auth/sessions.js";
import type { ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";
import { html, type SafeHtml } from "../html.js";
import { text, type Language, type TextKey } from "../i18n.js";
import { alert, renderPage } from "../layout.js";
import { formatMoney, formatTime, parseMoney } from "../shared/format.js";
import { codeText, fieldText } from "../shared/service-texts.js";
import type { ServiceName } from "../service-clients.js";
import type { ConsoleContextKoa } from "../state.js";

/** The five services, as the shared operator services (audit, approvals) are asked for each. */
export const SERVICES: readonly ServiceName[] = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"];

export function isServiceName(value: unknown): value is ServiceName {
  return typeof value === "string" && (SERVICES as readonly string[]).includes(value);
}

/** What every page of work needs: who is signed in (requireOperator ran), and their language. */
export interface SignedIn {
  operator: Operator;
  session: Session;
  lang: Language;
  t: (key: TextKey, params?: Record<string, string | number>) => string;
  /** A client of `service` whose every call carries this operator's 60-second assertion. */
  client<S extends DescService>(service: S, serviceName?: ServiceName): Client<S>;
}

export function signedIn(deps: ConsoleContext, ctx: ConsoleContextKoa): SignedIn {
  const { operator, session, lang } = ctx.state;
  if (!operator || !session) throw new ConsoleError(500, "INTERNAL_ERROR", "a page of work runs behind requireOperator");
  const signer = deps.assertions.assertionsFor(operator);
  return {
    operator,
    session,
    lang,
    t: (key, params) => text(lang, key, params),
    client: (service, serviceName) => {
      try {
        return deps.services.client(service, signer, serviceName);
      } catch (err) {
        // No address for the service (a console started without it): the page says it does not answer.
        throw new ConnectError((err as Error).message, Code.Unavailable);
      }
    },
  };
}

/** A page of work: the layout with the operator's header. */
export function workPage(ctx: ConsoleContextKoa, who: SignedIn, page: { title: string; body: SafeHtml; script?: SafeHtml }, status = 200): void {
  renderPage(ctx, { ...page, operator: who.operator, csrfToken: who.session.csrfToken }, status);
}

/** The page of an id that cannot be one (its alphabet, a stray path): not found, before any call. */
export function notFoundPage(ctx: ConsoleContextKoa, who: SignedIn): void {
  workPage(ctx, who, { title: who.t("error.title"), body: alert(who.t("error.notFound")) ?? html`` }, 404);
}

/** True when `value` is one of `names` (a form's action, a route's decision). */
export function isOneOf<T extends string>(names: readonly T[], value: unknown): value is T {
  return typeof value === "string" && (names as readonly string[]).includes(value);
}

/** The hidden CSRF field every form of a signed-in page carries. */
export function csrfField(who: SignedIn): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${who.session.csrfToken}">`;
}

/** How the console shows a service's refusal: the HTTP status of the page, the message, and what the service named. */
export interface Refusal {
  status: number;
  message: string;
  reason: string | undefined;
  /** The request field the service named (VALIDATION_ERROR), as the service spells it. */
  field: string | undefined;
  /** APPROVAL_REQUIRED: the approval that now waits for a second operator. */
  approvalId: string | undefined;
}

const APPROVAL_ID = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * A service's answer to an operator's call that did not succeed, as a page shows it. The
 * service decided (its role check, four-eyes, its rules); the console only words it. An error
 * that is not the service's answer (a bug here) is thrown on.
 */
export function refusalOf(err: unknown, t: SignedIn["t"]): Refusal {
  if (!(err instanceof ConnectError)) throw err;
  const info = errorInfo(err);
  const approvalId = info.details?.approvalId;
  const base = { reason: info.reason, field: info.field, approvalId: undefined };
  if (info.reason === "APPROVAL_REQUIRED" && approvalId && APPROVAL_ID.test(approvalId)) {
    // The same request waited already (anyone's): this is that approval, and whose it is.
    const maker = info.details?.alreadyWaiting === "true" ? info.details.maker : undefined;
    return { ...base, status: 202, approvalId, message: maker ? t("call.approvalAlreadyWaiting", { id: approvalId, maker }) : t("call.approvalRequired", { id: approvalId }) };
  }
  const detail = refusalDetail(languageOf(t), info);
  switch (info.code) {
    case Code.PermissionDenied:
      return { ...base, status: 403, message: t("call.permissionDenied", { detail }) };
    case Code.Unauthenticated:
      return { ...base, status: 401, message: t("call.unauthenticated") };
    case Code.NotFound:
      return { ...base, status: 404, message: t("call.notFound", { detail }) };
    case Code.InvalidArgument:
      return { ...base, status: 400, message: t("call.invalid", { detail }) };
    case Code.FailedPrecondition:
    case Code.AlreadyExists:
    case Code.Aborted:
    case Code.OutOfRange:
      return { ...base, status: 409, message: t("call.refused", { detail }) };
    case Code.Unavailable:
    case Code.DeadlineExceeded:
      return { ...base, status: 503, message: t("call.unavailable") };
    default:
      return { ...base, status: 502, message: t("call.failed", { detail }) };
  }
}

/** The language a page's `t` speaks (refusalOf is handed `who.t` alone). */
function languageOf(t: SignedIn["t"]): Language {
  return t("call.unavailable") === text("tr", "call.unavailable") ? "tr" : "en";
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

/** A refusal as the page shows it where the page's own content would be. */
export function refusalAlert(refusal: Refusal): SafeHtml {
  return alert(refusal.message) ?? html``;
}

/** The line on an approval that waits: who must act, and the link to it. */
export function waitingForApproval(who: SignedIn, service: string, approvalId: string): SafeHtml {
  return html`<div class="notice" role="status">${who.t("call.approvalWaiting")} <a href="${`/approvals/${service}/${approvalId}`}">${who.t("call.approvalLink", { id: approvalId })}</a></div>`;
}

/** A wide table that scrolls sideways inside its own box on a phone (390 px) rather than widening the page. */
export function scrollingTable(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
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

/** How long ago, in whole minutes, hours or days: the age of what waits. */
export function ageOf(at: Timestamp | undefined, now: Date, t: SignedIn["t"]): string {
  if (!at) return "";
  const minutes = Math.max(0, Math.floor((now.getTime() - timestampDate(at).getTime()) / 60_000));
  if (minutes < 60) return t("age.minutes", { n: minutes });
  if (minutes < 48 * 60) return t("age.hours", { n: Math.floor(minutes / 60) });
  return t("age.days", { n: Math.floor(minutes / 1440) });
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
  return Number.isNaN(date.getTime()) ? undefined : date;
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

/** First page and next page links of a list paged by a service's cursor, keeping its filters. */
export function pager(who: SignedIn, path: string, filters: Record<string, string | undefined>, cursor: string, next: string): SafeHtml {
  return html`<nav aria-label="${who.t("pager.label")}"><ul>${cursor ? html`<li><a href="${linkTo(path, filters)}">${who.t("pager.first")}</a></li>` : null}${next ? html`<li><a href="${linkTo(path, { ...filters, cursor: next })}" rel="next">${who.t("pager.next")}</a></li>` : null}</ul></nav>`;
}

/** After a change: a redirect (303) to the page that shows it, so a reload does not repeat it. */
export function seeOther(ctx: ConsoleContextKoa, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}
