import { isOperatorRole, roleAtLeast, type OperatorRole } from "@payments/access";
import { html, type HtmlValue, type SafeHtml } from "../shared/html.js";
import { text, type TextKey } from "./texts/index.js";
import { htmlDocument } from "../shared/layout.js";
import { searchBox } from "../shared/search-box.js";
import { roleText } from "../shared/service-texts.js";
import type { ConsoleContextKoa } from "../state.js";

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** The signed-in operator's header (name, role, sign-out); none on sign-in and set-password. */
  operator?: { displayName: string; role: string };
  /** The session's CSRF token, for the sign-out form. */
  csrfToken?: string;
  /** A script of the page's own (a constant, never request data), run under the response's nonce. */
  script?: SafeHtml;
}

/** The areas of work, in the navigation of every signed-in page; an area whose every page needs a higher role (the service's or the console's rule) is not offered below it. */
const AREAS: ReadonlyArray<{ path: string; key: TextKey; minRole?: OperatorRole }> = [
  { path: "/", key: "nav.home" },
  { path: "/deposits", key: "nav.deposits" },
  { path: "/withdrawals", key: "nav.withdrawals" },
  { path: "/transfers", key: "nav.transfers" },
  { path: "/statements", key: "nav.statements" },
  { path: "/events", key: "nav.events" },
  { path: "/merchants", key: "nav.merchants" },
  { path: "/accounts", key: "nav.accounts" },
  { path: "/banks", key: "nav.banks" },
  { path: "/approvals", key: "nav.approvals" },
  { path: "/audit", key: "nav.audit" },
  { path: "/reconciliation", key: "nav.reconciliation", minRole: "finance" },
  { path: "/transfer-returns", key: "nav.transferReturns" },
  { path: "/withheld-credits", key: "nav.withheldCredits" },
  { path: "/operators", key: "nav.operators", minRole: "admin" },
];

function areaLinks(ctx: ConsoleContextKoa, t: (key: TextKey) => string, role: string): SafeHtml {
  const items = AREAS.filter((area) => !area.minRole || (isOperatorRole(role) && roleAtLeast(role, area.minRole))).map((area) => {
    const current = area.path === "/" ? ctx.path === "/" : ctx.path === area.path || ctx.path.startsWith(`${area.path}/`);
    return html`<li><a href="${area.path}"${current ? html` aria-current="page"` : null}>${t(area.key)}</a></li>`;
  });
  return html`<nav class="areas" aria-label="${t("nav.areas")}"><ul>${items}</ul></nav>`;
}

/** Every operators' page of the console: the document with the operators' navigation, who is signed in and sign-out. */
export function layout(ctx: ConsoleContextKoa, options: PageOptions): string {
  const lang = ctx.state.lang;
  const t = (key: TextKey, params?: Record<string, string>) => text(lang, key, params);
  const signedIn: HtmlValue = options.operator
    ? html`${areaLinks(ctx, t, options.operator.role)}${searchBox(lang, "operators")}
<p>${t("nav.signedInAs", { name: options.operator.displayName, role: roleText(lang, options.operator.role) })}</p>
<form method="post" action="/sign-out"><input type="hidden" name="_csrf" value="${options.csrfToken ?? ""}"><button type="submit" class="btn btn-sm">${t("nav.signOut")}</button></form>`
    : null;
  return htmlDocument(ctx, { title: options.title, body: options.body, script: options.script, shellText: t, signedIn });
}

/** Answers the request with a page. */
export function renderPage(ctx: ConsoleContextKoa, options: PageOptions, status = 200): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = layout(ctx, options);
}

