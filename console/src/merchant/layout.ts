import type { Language } from "../shared/i18n.js";
import { html, type SafeHtml } from "../shared/html.js";
import { htmlDocument } from "../shared/layout.js";
import type { ConsoleContextKoa } from "../state.js";
import { common } from "./common/texts.js";
import { searchBox } from "../shared/search-box.js";

/** The merchant dashboard's areas, in its navigation. */
export type MerchantArea = "home" | "payments" | "money" | "developers" | "team";

const AREAS: ReadonlyArray<{ area: MerchantArea; path: string; key: "nav.home" | "nav.payments" | "nav.money" | "nav.developers" | "nav.team" }> = [
  { area: "home", path: "/merchant", key: "nav.home" },
  { area: "payments", path: "/merchant/payments", key: "nav.payments" },
  { area: "money", path: "/merchant/money", key: "nav.money" },
  { area: "developers", path: "/merchant/developers", key: "nav.developers" },
  { area: "team", path: "/merchant/team", key: "nav.team" },
];

export interface MerchantLayoutOptions {
  title: string;
  body: SafeHtml;
  script?: SafeHtml | undefined;
  active?: MerchantArea | undefined;
  /** The signed-in user's header (name, role, merchant, sign-out); none on sign-in and set-password. */
  user?: { displayName: string; role: string; merchantName: string; csrfToken: string } | undefined;
}

/** Every merchant dashboard page: the operators' document and stylesheet, its own header colour (`.merchant-header`) and navigation. */
export function merchantLayout(ctx: ConsoleContextKoa, options: MerchantLayoutOptions): string {
  const lang = ctx.state.lang;
  const t = (key: Parameters<typeof common>[1], params?: Record<string, string>) => common(lang, key, params);
  const user = options.user;
  const signedIn = user
    ? html`<nav class="areas" aria-label="${t("nav.areas")}"><ul>${AREAS.map(
        (a) => html`<li><a href="${a.path}"${a.area === options.active ? html` aria-current="page"` : null}>${t(a.key)}</a></li>`,
      )}</ul></nav>${searchBox(lang, "merchant")}
<p class="who">${t("nav.signedInAs", { name: user.displayName, role: roleName(lang, user.role), merchant: user.merchantName })}</p>
<form method="post" action="/merchant/sign-out"><input type="hidden" name="_csrf" value="${user.csrfToken}"><button type="submit" class="btn btn-sm">${t("nav.signOut")}</button></form>`
    : null;
  return htmlDocument(ctx, { title: options.title, body: options.body, script: options.script, headerClass: "merchant-header", shellText: t, signedIn });
}

/** A merchant role in the page's language. */
export function roleName(lang: Language, role: string): string {
  return role === "owner" || role === "developer" || role === "finance" || role === "viewer" ? common(lang, `role.${role}`) : role;
}

export function renderMerchantLayout(ctx: ConsoleContextKoa, options: MerchantLayoutOptions, status = 200): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = merchantLayout(ctx, options);
}
