/**
 * Primer's classes on the console's plain markup, added by the layout to every page's content so
 * no page is rewritten for the design system: a `<button>` becomes `.btn` (a submit button
 * `.btn .btn-primary`), a text-like `<input>` and a `<textarea>` `.form-control`, a `<select>`
 * `.form-select`. An element that already has a class is left as its page wrote it.
 *
 * The content is the console's own escaped HTML (`html`): a `<` in it is always a tag, never
 * text a request brought, so matching opening tags is exact. Scripts are not part of it.
 */
const NOT_TEXT_INPUTS = new Set(["hidden", "checkbox", "radio", "file", "submit", "button", "reset", "image", "range", "color"]);

function attribute(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
}

function classFor(name: string, tag: string): string | undefined {
  switch (name) {
    case "button":
      return (attribute(tag, "type") ?? "submit") === "submit" ? "btn btn-primary" : "btn";
    case "input":
      return NOT_TEXT_INPUTS.has(attribute(tag, "type") ?? "text") ? undefined : "form-control";
    case "textarea":
      return "form-control";
    case "select":
      return "form-select";
    default:
      return undefined;
  }
}

export function primerClasses(markup: string): string {
  return markup.replace(/<(button|input|textarea|select)(\s[^>]*)?>/g, (tag, name: string, attrs: string | undefined) => {
    if (attrs && /\sclass="/.test(attrs)) return tag;
    const cls = classFor(name, tag);
    return cls ? `<${name} class="${cls}"${attrs ?? ""}>` : tag;
  });
}
