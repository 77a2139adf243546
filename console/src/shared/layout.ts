import { html, SafeHtml, type HtmlValue } from "./html.js";
import { LANGUAGES, type Language } from "./i18n.js";
import { modeSwitch, sandboxBanner } from "./mode.js";
import { stylesheet } from "./styles.js";
import { primerClasses } from "./styles-markup.js";
import { keepWordsWhole, labelTableCells } from "./table.js";
import type { ConsoleContextKoa } from "../state.js";

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
  /** The header's class beside Primer's `Header` (the merchant dashboard's own colour). */
  headerClass?: string;
  /** The application's name (header, `<title>`), the skip link's and the language switcher's labels, in the page's language. */
  shellText: (key: "app.title" | "nav.skip" | "nav.language") => string;
  /** The signed-in part of the header (navigation, who, sign-out); null before sign-in. */
  signedIn: HtmlValue;
}

/**
 * The page's own content as it is served: Primer's classes on its plain controls
 * (styles-markup.ts), every table's cells labelled for the phone's cards and their words kept
 * whole (shared/table.ts).
 */
export function styledContent(body: SafeHtml): SafeHtml {
  // Only tags gain attributes (class, data-label from a heading's already escaped text): it stays the page's own safe markup.
  return new SafeHtml(primerClasses(keepWordsWhole(labelTableCells(body.text))));
}

/**
 * The one HTML document of every console page, operators' or merchant users': `<html lang>` in
 * the chosen language, the console's stylesheet (Primer and its own rules, a same-origin file
 * with its integrity hash: shared/styles.ts), a skip link, the header (application name, the
 * signed-in part, the language switcher) and the page's own content in `<main>`.
 */
export function htmlDocument(ctx: ConsoleContextKoa, options: DocumentOptions): string {
  const lang = ctx.state.lang;
  const appTitle = options.shellText("app.title");
  const sheet = stylesheet();
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · ${appTitle}</title>
<link rel="stylesheet" href="${sheet.path}" integrity="${sheet.integrity}">
<link rel="icon" href="data:,">
</head>
<body>
<a class="skip" href="#main">${options.shellText("nav.skip")}</a>
<header class="${`Header console-header ${options.headerClass ?? ""}`.trim()}"><strong>${appTitle}</strong>${options.signedIn}${options.signedIn ? modeSwitch(ctx, lang) : null}${languageLinks(ctx, lang, options.shellText("nav.language"))}</header>
${options.signedIn ? sandboxBanner(ctx, lang) : null}
<main id="main" tabindex="-1">
<h1>${options.title}</h1>
${styledContent(options.body)}
</main>
${options.script ? html`<script nonce="${ctx.state.nonce}">${options.script}</script>` : null}
</body>
</html>`.text;
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
  inputmode?: "numeric" | "decimal";
}

/** A labelled input whose hint and error are announced with it (WCAG 1.3.1, 3.3.1). */
export function field(options: FieldOptions): SafeHtml {
  const id = options.id ?? `field-${options.name}`;
  const hintId = options.hint ? `${id}-hint` : undefined;
  const errorId = options.error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter((v) => v !== undefined).join(" ");
  return html`<label for="${id}">${options.label}</label>
${options.hint ? html`<p class="hint" id="${hintId}">${options.hint}</p>` : null}
<input class="form-control" id="${id}" name="${options.name}" type="${options.type ?? "text"}"${options.value !== undefined ? html` value="${options.value}"` : null}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : null}${options.inputmode ? html` inputmode="${options.inputmode}"` : null}${options.required ? html` required` : null}${describedBy ? html` aria-describedby="${describedBy}"` : null}${options.error ? html` aria-invalid="true"` : null}>
${options.error ? html`<p class="error" id="${errorId}">${options.error}</p>` : null}`;
}

/** A form-level problem, announced when the page loads (role=alert). */
export function alert(message: string | undefined): SafeHtml | null {
  return message ? html`<div class="alert" role="alert">${message}</div>` : null;
}

export function notice(message: string | undefined): SafeHtml | null {
  return message ? html`<div class="notice" role="status">${message}</div>` : null;
}
