import { html, type SafeHtml } from "./html.js";
import type { Language } from "./i18n.js";
import { defineTexts } from "./texts.js";

const boxTexts = defineTexts(
  { label: "Search", placeholder: "id, reference, process id, IBAN or name" },
  { label: "Ara", placeholder: "kimlik, referans, işlem no, IBAN veya ad" },
);

/** The one search box of both layouts' headers (shared/search.ts answers it): one small form, no script. */
export function searchBox(lang: Language, side: "operators" | "merchant"): SafeHtml {
  const t = (key: "label" | "placeholder") => boxTexts(lang, key);
  return html`<form method="get" action="${side === "operators" ? "/search" : "/merchant/search"}" role="search" class="search-box"><input id="header-search" name="q" type="search" aria-label="${t("label")}" placeholder="${t("placeholder")}" maxlength="120"><button type="submit">${t("label")}</button></form>`;
}
