import type { DescService } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { errorInfo } from "@payments/kit";
import type { Operator } from "../identity/operators.js";
import type { Session } from "../identity/sessions.js";
import type { ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";
import { html, type SafeHtml } from "../shared/html.js";
import { clientsOf } from "../shared/person-clients.js";
import { type Language } from "../shared/i18n.js";
import { text, type TextKey } from "./texts/index.js";
import { alert } from "../shared/layout.js";
import { renderPage } from "./layout.js";
import type { ServiceName } from "../service-clients.js";
import type { ConsoleContextKoa, RouteContext } from "../state.js";
import type { ConsoleRoute } from "../route.js";
import type { OperatorRole } from "@payments/access";
import { ID_PATTERN, linkTo, refusalDetail } from "../shared/params.js";

export { cursorParam, dayAfter, dayStart, formatTime, ID_PATTERN, isServiceName, linkTo, minorUnits, money, queryText, refusalDetail, seeOther, SERVICES, timeOf } from "../shared/params.js";

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
    client: clientsOf(deps.services, signer),
  };
}

/**
 * An operators' page route: `access: "operator"` (of at least `minRole`, checked before the
 * handler runs; `upload` for a multipart form), and a handler that gets the signed-in operator
 * as `signedIn` gives it. The path's `ids`, when named, are each checked against the ids'
 * alphabet first (anything else is the not-found page, before any call) and handed over.
 */
export function operatorRoute<K extends string = never>(
  deps: ConsoleContext,
  route: { method: ConsoleRoute["method"]; path: string; minRole?: OperatorRole; upload?: boolean; ids?: readonly K[] },
  handler: (ctx: RouteContext, who: SignedIn, ids: Record<K, string>) => Promise<void>,
): ConsoleRoute {
  return {
    method: route.method,
    path: route.path,
    access: "operator",
    ...(route.minRole ? { minRole: route.minRole } : {}),
    ...(route.upload ? { upload: true } : {}),
    handler: async (ctx) => {
      const who = signedIn(deps, ctx);
      const ids = {} as Record<K, string>;
      for (const name of route.ids ?? []) {
        const value = ctx.params[name] ?? "";
        if (!ID_PATTERN.test(value)) return notFoundPage(ctx, who);
        ids[name] = value;
      }
      return handler(ctx, who, ids);
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

/** The service's answer to `call`, or its refusal as a page shows it (an error that is no answer of a service is thrown on). */
export async function answerOrRefusal<T>(who: SignedIn, call: () => Promise<T>): Promise<T | Refusal> {
  try {
    return await call();
  } catch (err) {
    return refusalOf(err, who.t);
  }
}

/**
 * The one thing a page is about, read by `read`: when the service refuses, the page says so (with
 * `back`, the way back to its list); when it finds nothing, the not-found page; either way undefined.
 */
export async function readOne<T>(ctx: ConsoleContextKoa, who: SignedIn, page: { title: string; back: SafeHtml; id: string }, read: () => Promise<T | undefined>): Promise<T | undefined> {
  let found: T | undefined;
  try {
    found = await read();
  } catch (err) {
    const refusal = refusalOf(err, who.t);
    workPage(ctx, who, { title: page.title, body: html`${alert(refusal.message)}${page.back}` }, refusal.status);
    return undefined;
  }
  if (!found) workPage(ctx, who, { title: page.title, body: alert(who.t("call.notFound", { detail: page.id })) ?? html`` }, 404);
  return found;
}

/** A refusal as the page shows it where the page's own content would be. */
export function refusalAlert(refusal: Refusal): SafeHtml {
  return alert(refusal.message) ?? html``;
}

/** The line on an approval that waits: who must act, and the link to it. */
export function waitingForApproval(who: SignedIn, service: string, approvalId: string): SafeHtml {
  return html`<div class="notice" role="status">${who.t("call.approvalWaiting")} <a href="${`/approvals/${service}/${approvalId}`}">${who.t("call.approvalLink", { id: approvalId })}</a></div>`;
}


/** How long ago, in whole minutes, hours or days: the age of what waits. */
export function ageOf(at: Timestamp | undefined, now: Date, t: SignedIn["t"]): string {
  if (!at) return "";
  const minutes = Math.max(0, Math.floor((now.getTime() - timestampDate(at).getTime()) / 60_000));
  if (minutes < 60) return t("age.minutes", { n: minutes });
  if (minutes < 48 * 60) return t("age.hours", { n: Math.floor(minutes / 60) });
  return t("age.days", { n: Math.floor(minutes / 1440) });
}

/** First page and next page links of a list paged by a service's cursor, keeping its filters. */
export function pager(who: SignedIn, path: string, filters: Record<string, string | undefined>, cursor: string, next: string): SafeHtml {
  return html`<nav aria-label="${who.t("pager.label")}"><ul>${cursor ? html`<li><a href="${linkTo(path, filters)}">${who.t("pager.first")}</a></li>` : null}${next ? html`<li><a href="${linkTo(path, { ...filters, cursor: next })}" rel="next">${who.t("pager.next")}</a></li>` : null}</ul></nav>`;
}

export { tableScroll as scrollingTable } from "../shared/table.js";
