import { readCookie, setCookie } from "../cookies.js";
import { html, type SafeHtml } from "./html.js";
import type { Language } from "./i18n.js";
import type { ConsoleContextKoa, ConsoleMiddleware } from "../state.js";

/**
 * Live or sandbox, as Stripe's test mode: every list, figure and chart of the console shows one of
 * the two, never both added together. `?mode=live|sandbox` chooses and is remembered in a cookie
 * (a year, like the language); live is the default, so nobody reads sandbox money as real by
 * accident. The choice only narrows what a page asks the services for: it grants nothing.
 */
export type Mode = "live" | "sandbox";

export const MODE_COOKIE = "console_mode";

export function isMode(value: unknown): value is Mode {
  return value === "live" || value === "sandbox";
}

export function modeMiddleware(options: { secure: boolean }): ConsoleMiddleware {
  return async (ctx, next) => {
    const asked = ctx.query.mode;
    if (isMode(asked)) setCookie(ctx, MODE_COOKIE, asked, { secure: options.secure, maxAgeSeconds: 365 * 24 * 3600 });
    const remembered = readCookie(ctx, MODE_COOKIE);
    ctx.state.mode = isMode(asked) ? asked : isMode(remembered) ? remembered : "live";
    ctx.state.modeChosen = isMode(asked) || isMode(remembered);
    await next();
  };
}

/** The `sandbox` filter a list or summary RPC takes for the page's mode. */
export function sandboxFilter(mode: Mode): boolean {
  return mode === "sandbox";
}

const TEXTS = {
  en: { label: "Data shown", live: "Live", sandbox: "Sandbox", banner: "Sandbox data: made-up money, nothing here is real." },
  tr: { label: "Gösterilen veri", live: "Canlı", sandbox: "Test ortamı", banner: "Test ortamı verisi: gerçek olmayan para, burada hiçbir şey gerçek değil." },
} as const;

/** The switch in every signed-in header: the same page in the other mode (`aria-current` on the one shown). */
export function modeSwitch(ctx: ConsoleContextKoa, lang: Language): SafeHtml {
  const t = TEXTS[lang];
  // The answer to a form (a POST) has no address to show again: the switch leads to its side's home.
  const shown = ctx.method === "GET" || ctx.method === "HEAD";
  const path = shown ? ctx.path : ctx.path.startsWith("/merchant") ? "/merchant" : "/";
  const links = (["live", "sandbox"] as const).map((mode) => {
    const params = new URLSearchParams(shown ? ctx.querystring : "");
    params.set("mode", mode);
    params.delete("cursor");
    return html`<li><a href="${`${path}?${params.toString()}`}"${mode === ctx.state.mode ? html` aria-current="true"` : null}>${t[mode]}</a></li>`;
  });
  return html`<nav class="mode-switch" aria-label="${t.label}"><ul>${links}</ul></nav>`;
}

/** Under the header of a page in sandbox mode: a band that says so. */
export function sandboxBanner(ctx: ConsoleContextKoa, lang: Language): SafeHtml | null {
  return ctx.state.mode === "sandbox" ? html`<p class="sandbox-band" role="note">${TEXTS[lang].banner}</p>` : null;
}
