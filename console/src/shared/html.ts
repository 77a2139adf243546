/** Markup the console produced itself (a template's result), which `html` puts in as it is. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What a template may interpolate: text (escaped), markup made by `html`, lists of either; null, undefined and false vanish. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

/** Text for an element's content or a quoted attribute value: every character that could end either is escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

/**
 * The one way the console writes HTML: every interpolated value is escaped unless it is itself
 * the result of `html`, so a name or an email typed by anyone can never become markup. Values
 * go only into element content or double-quoted attributes, never into a tag name, an unquoted
 * attribute, a URL scheme, a script or a style.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new SafeHtml(out);
}

/** A constant of the console's own (a stylesheet), never anything a request brought. */
export function trusted(text: string): SafeHtml {
  return new SafeHtml(text);
}
