import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { errorInfo } from "@payments/kit";
import type { MerchantUser } from "../identity/merchant-users.js";
import type { MerchantRole } from "@payments/access";
import type { ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";
import { html, type SafeHtml } from "../shared/html.js";
import { clientsOf } from "../shared/person-clients.js";
import type { Language } from "../shared/i18n.js";
import { alert } from "../shared/layout.js";
import { refusalDetail, seeOther } from "../shared/params.js";
import { fieldText } from "../shared/service-texts.js";
import type { ConsoleRoute } from "../route.js";
import type { ServiceName } from "../service-clients.js";
import type { ConsoleContextKoa, RouteContext } from "../state.js";
import { common } from "./common/texts.js";
import { renderMerchantLayout, type MerchantArea } from "./layout.js";

/**
 * What every merchant dashboard page needs: who is signed in (the `merchant` route's checks ran),
 * their session's CSRF token, their language, and clients whose every call carries the user's
 * 60-second assertion naming their merchant (the services scope the call to it).
 */
export interface MerchantSignedIn {
  user: MerchantUser;
  csrfToken: string;
  lang: Language;
  /** The merchant's name as the merchant service gives it (its id when the service did not answer). */
  merchantName: string;
  client<S extends DescService>(service: S, serviceName?: ServiceName): Client<S>;
}

export function signedInMerchant(deps: ConsoleContext, ctx: ConsoleContextKoa): MerchantSignedIn {
  const { merchantUser: user, merchantSession: session, lang } = ctx.state;
  if (!user || !session) throw new ConsoleError(500, "INTERNAL_ERROR", "a merchant page runs behind requireMerchantUser");
  const signer = deps.assertions.assertionsForMerchantUser(user);
  return {
    user,
    csrfToken: session.csrfToken,
    lang,
    merchantName: ctx.state.merchantName ?? user.merchantId,
    client: clientsOf(deps.services, signer),
  };
}

/**
 * A merchant dashboard route: `access: "merchant"` (of `roles` only, when given, checked before
 * the handler runs), and a handler that gets the signed-in user as `signedInMerchant` gives it.
 */
export function merchantRoute(
  deps: ConsoleContext,
  route: { method: ConsoleRoute["method"]; path: string; roles?: readonly MerchantRole[] },
  handler: (ctx: RouteContext, who: MerchantSignedIn) => Promise<void>,
): ConsoleRoute {
  return {
    method: route.method,
    path: route.path,
    access: "merchant",
    ...(route.roles ? { merchantRoles: route.roles } : {}),
    handler: async (ctx) => handler(ctx, signedInMerchant(deps, ctx)),
  };
}

/**
 * The last steps of a form that changes something: the call; its refusal answered by `refused`
 * (a page that says why); else 303 to `to`, so a reload does not send the form again.
 */
export async function changeThenSeeOther(ctx: ConsoleContextKoa, change: () => Promise<unknown>, refused: (err: unknown) => Promise<void> | void, to: string): Promise<void> {
  try {
    await change();
  } catch (err) {
    return refused(err);
  }
  seeOther(ctx, to);
}

export interface MerchantPageOptions {
  title: string;
  body: SafeHtml;
  /** A script of the page's own (a constant, never request data), run under the response's nonce. */
  script?: SafeHtml;
  /** The navigation entry marked current. */
  active?: MerchantArea;
}

/** A merchant dashboard page: the merchant layout with the user's header. */
export function merchantPage(ctx: ConsoleContextKoa, who: MerchantSignedIn, page: MerchantPageOptions, status = 200): void {
  renderMerchantLayout(
    ctx,
    { ...page, user: { displayName: who.user.displayName, role: who.user.role, merchantName: who.merchantName, csrfToken: who.csrfToken } },
    status,
  );
}

/** The hidden CSRF field every form of a merchant page carries. */
export function merchantCsrfField(who: MerchantSignedIn): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${who.csrfToken}">`;
}


/** Not found (an id of another merchant, a stray path): 404, before or after a call. */
export function merchantNotFound(ctx: ConsoleContextKoa, who: MerchantSignedIn, active?: MerchantArea): void {
  merchantPage(ctx, who, { title: common(who.lang, "error.title"), body: alert(common(who.lang, "error.notFound")) ?? html``, ...(active ? { active } : {}) }, 404);
}

/**
 * A service's refusal of a merchant user's call, as a page: NotFound 404, PermissionDenied 403,
 * InvalidArgument 400 (with the field the service named), APPROVAL_REQUIRED 202 (a second user
 * of the merchant must approve: link to the approvals on the Money page), any other
 * FailedPrecondition 409, Unavailable 503. Anything else (a bug here, an unexpected code) is
 * thrown on, so the error handler answers 500 without detail.
 */
export function merchantRefusal(ctx: ConsoleContextKoa, who: MerchantSignedIn, err: unknown, options: { title?: string; active?: MerchantArea } = {}): void {
  if (!(err instanceof ConnectError)) throw err;
  const t = (key: Parameters<typeof common>[1], params?: Record<string, string>) => common(who.lang, key, params);
  const info = errorInfo(err);
  const page = (status: number, body: SafeHtml) =>
    merchantPage(ctx, who, { title: options.title ?? t("error.title"), body, ...(options.active ? { active: options.active } : {}) }, status);
  const refused = (status: number, message: string) => page(status, alert(message) ?? html``);
  if (info.reason === "APPROVAL_REQUIRED") {
    return page(202, html`<div class="notice" role="status">${t("call.approvalRequired")} <a href="/merchant/money#approvals">${t("call.approvalLink")}</a></div>`);
  }
  // Turkish pages: the code and field in Turkish, not the service's English sentence (refusalDetail).
  const detail = refusalDetail(who.lang, { ...info, field: undefined });
  switch (info.code) {
    case Code.NotFound:
      return refused(404, t("call.notFound", { detail }));
    case Code.PermissionDenied:
      return refused(403, t("call.permissionDenied", { detail }));
    case Code.Unauthenticated:
      return refused(401, t("call.unauthenticated"));
    case Code.InvalidArgument:
      return refused(400, info.field ? t("call.invalidField", { field: who.lang === "en" ? info.field : fieldText(who.lang, info.field), detail }) : t("call.invalid", { detail }));
    case Code.FailedPrecondition:
    case Code.AlreadyExists:
    case Code.Aborted:
      return refused(409, t("call.refused", { detail }));
    case Code.Unavailable:
    case Code.DeadlineExceeded:
      return refused(503, t("call.unavailable"));
    default:
      throw err;
  }
}

export { tableScroll } from "../shared/table.js";
