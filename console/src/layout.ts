import { html, trusted, type HtmlValue, type SafeHtml } from "./html.js";
import { LANGUAGES, text, type Language, type TextKey } from "./i18n.js";
import { modeSwitch, sandboxBanner } from "./shared/mode.js";
import { searchBox } from "./shared/search-box.js";
import type { ConsoleContextKoa } from "./state.js";

/** The console's one stylesheet, inline under the response's nonce (nothing is fetched from anywhere); the merchant layout adds its own rules after it. */
export const STYLE = trusted(`
:root { color-scheme: light; font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; background: #f6f7f9; }
body { margin: 0; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; justify-content: space-between; padding: .75rem 1.5rem; background: #1f3a5f; color: #fff; }
header a { color: #fff; }
header form { display: inline; }
nav ul { list-style: none; display: flex; gap: 1rem; margin: 0; padding: 0; }
main { max-width: 72rem; margin: 2rem auto; padding: 0 1.5rem; }
nav.areas ul { flex-wrap: wrap; }
nav.areas a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
table { border-collapse: collapse; width: 100%; background: #fff; margin: 1rem 0; }
.table-scroll { overflow-x: auto; max-width: 100%; }
caption { text-align: left; font-weight: 600; padding: .5rem 0; }
th, td { border: 1px solid #d0d5dd; padding: .4rem .6rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
select, textarea { font: inherit; padding: .5rem; border: 1px solid #667085; border-radius: 4px; box-sizing: border-box; }
textarea { width: 100%; min-height: 12rem; font-family: ui-monospace, monospace; }
pre { background: #fff; border: 1px solid #d0d5dd; padding: 1rem; overflow: auto; white-space: pre-wrap; word-break: break-all; }
form.inline { display: inline; }
.filters { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-end; }
.filters label { margin-top: .5rem; }
.filters button { margin-top: .5rem; }
.actions { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; }
.actions h3 { margin-top: 0; }
.ok { color: #05603a; font-weight: 600; }
.bad { color: #b42318; font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid #f79009; outline-offset: 2px; }
.card { background: #fff; border: 1px solid #d0d5dd; border-radius: 6px; padding: 1.5rem; }
label { display: block; font-weight: 600; margin-top: 1rem; }
label.inline-label { display: inline; margin-top: 0; }
input[type="checkbox"] { width: auto; }
input { font: inherit; padding: .5rem; width: 100%; max-width: 24rem; box-sizing: border-box; border: 1px solid #667085; border-radius: 4px; }
input[aria-invalid="true"] { border-color: #b42318; }
button { font: inherit; margin-top: 1.25rem; padding: .5rem 1.25rem; background: #1f3a5f; color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
header button { margin: 0; background: transparent; border: 1px solid #fff; }
.hint { color: #475467; margin: .25rem 0 0; }
.error { color: #b42318; margin: .25rem 0 0; }
.alert { border-left: 4px solid #b42318; background: #fef3f2; padding: .75rem 1rem; }
.notice { border-left: 4px solid #1f3a5f; background: #eff4ff; padding: .75rem 1rem; }
code { word-break: break-all; }
.mode-switch a[aria-current="true"] { font-weight: 700; text-decoration-thickness: 3px; }
.sandbox-band { margin: 0; padding: .4rem 1.5rem; background: #fef0c7; color: #7a2e0e; font-weight: 600; }
h1, h2, dd { overflow-wrap: anywhere; }
`);

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

/** The areas of work, in the navigation of every signed-in page. */
const AREAS: ReadonlyArray<{ path: string; key: TextKey }> = [
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
  { path: "/reconciliation", key: "nav.reconciliation" },
  { path: "/transfer-returns", key: "nav.transferReturns" },
  { path: "/withheld-credits", key: "nav.withheldCredits" },
  { path: "/operators", key: "nav.operators" },
];

function areaLinks(ctx: ConsoleContextKoa, t: (key: TextKey) => string): SafeHtml {
  const items = AREAS.map((area) => {
    const current = area.path === "/" ? ctx.path === "/" : ctx.path === area.path || ctx.path.startsWith(`${area.path}/`);
    return html`<li><a href="${area.path}"${current ? html` aria-current="page"` : null}>${t(area.key)}</a></li>`;
  });
  return html`<nav class="areas" aria-label="${t("nav.areas")}"><ul>${items}</ul></nav>`;
}

/** The language switcher: the same page with ?lang=…, which also remembers the choice in a cookie. */
function languageLinks(ctx: ConsoleContextKoa, lang: Language, label: string): SafeHtml {
  const links = LANGUAGES.map((code) => {
    const params = new URLSearchParams(ctx.querystring);
    params.set("lang", code);
    return html`<li><a href="${`${ctx.path}?${params.toString()}`}" lang="${code}" hreflang="${code}"${code === lang ? html` aria-current="true"` : ""}>${code === "tr" ? "Türkçe" : "English"}</a></li>`;
  });
  return html`<nav aria-label="${label}"><ul>${links}</ul></nav>`;
}

/** What differs between the operators' and the merchant dashboard's pages around the same document. */
export interface DocumentOptions {
  title: string;
  body: SafeHtml;
  script?: SafeHtml | undefined;
  style: SafeHtml;
  /** The application's name (header, `<title>`), the skip link's and the language switcher's labels, in the page's language. */
  shellText: (key: "app.title" | "nav.skip" | "nav.language") => string;
  /** The signed-in part of the header (navigation, who, sign-out); null before sign-in. */
  signedIn: HtmlValue;
}

/**
 * The one HTML document of every console page, operators' or merchant users': `<html lang>` in
 * the chosen language, one nonce'd stylesheet, a skip link, the header (application name, the
 * signed-in part, the language switcher) and the page's own content in `<main>`.
 */
export function htmlDocument(ctx: ConsoleContextKoa, options: DocumentOptions): string {
  const lang = ctx.state.lang;
  const appTitle = options.shellText("app.title");
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · ${appTitle}</title>
<style nonce="${ctx.state.nonce}">${options.style}</style>
</head>
<body>
<a class="skip" href="#main">${options.shellText("nav.skip")}</a>
<header><strong>${appTitle}</strong>${options.signedIn}${options.signedIn ? modeSwitch(ctx, lang) : null}${languageLinks(ctx, lang, options.shellText("nav.language"))}</header>
${options.signedIn ? sandboxBanner(ctx, lang) : null}
<main id="main" tabindex="-1">
<h1>${options.title}</h1>
${options.body}
</main>
${options.script ? html`<script nonce="${ctx.state.nonce}">${options.script}</script>` : null}
</body>
</html>`.text;
}

/** Every operators' page of the console: the document with the operators' navigation, who is signed in and sign-out. */
export function layout(ctx: ConsoleContextKoa, options: PageOptions): string {
  const lang = ctx.state.lang;
  const t = (key: TextKey, params?: Record<string, string>) => text(lang, key, params);
  const signedIn: HtmlValue = options.operator
    ? html`${areaLinks(ctx, t)}${searchBox(lang, "operators")}
<p>${t("nav.signedInAs", { name: options.operator.displayName, role: options.operator.role })}</p>
<form method="post" action="/sign-out"><input type="hidden" name="_csrf" value="${options.csrfToken ?? ""}"><button type="submit">${t("nav.signOut")}</button></form>`
    : null;
  return htmlDocument(ctx, { title: options.title, body: options.body, script: options.script, style: STYLE, shellText: t, signedIn });
}

/** Answers the request with a page. */
export function renderPage(ctx: ConsoleContextKoa, options: PageOptions, status = 200): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = layout(ctx, options);
}

export interface FieldOptions {
  name: string;
  /** The element's id when one page has two fields of the same name (two forms); `field-<name>` otherwise. */
  id?: string;
  label: string;
  type?: "text" | "email" | "password" | "search" | "date" | "datetime-local";
  value?: string;
  autocomplete?: string;
  /** Shown under the field and tied to it (aria-describedby); marks it invalid. */
  error?: string | undefined;
  hint?: string | undefined;
  required?: boolean;
  inputmode?: "numeric";
}

/** A labelled input whose hint and error are announced with it (WCAG 1.3.1, 3.3.1). */
export function field(options: FieldOptions): SafeHtml {
  const id = options.id ?? `field-${options.name}`;
  const hintId = options.hint ? `${id}-hint` : undefined;
  const errorId = options.error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter((v) => v !== undefined).join(" ");
  return html`<label for="${id}">${options.label}</label>
${options.hint ? html`<p class="hint" id="${hintId}">${options.hint}</p>` : null}
<input id="${id}" name="${options.name}" type="${options.type ?? "text"}"${options.value !== undefined ? html` value="${options.value}"` : null}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : null}${options.inputmode ? html` inputmode="${options.inputmode}"` : null}${options.required ? html` required` : null}${describedBy ? html` aria-describedby="${describedBy}"` : null}${options.error ? html` aria-invalid="true"` : null}>
${options.error ? html`<p class="error" id="${errorId}">${options.error}</p>` : null}`;
}

/** A form-level problem, announced when the page loads (role=alert). */
export function alert(message: string | undefined): SafeHtml | null {
  return message ? html`<div class="alert" role="alert">${message}</div>` : null;
}

export function notice(message: string | undefined): SafeHtml | null {
  return message ? html`<div class="notice" role="status">${message}</div>` : null;
}
