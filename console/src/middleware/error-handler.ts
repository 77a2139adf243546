import type { Logger } from "@payments/kit";
import { ConsoleError } from "../errors.js";
import { html } from "../shared/html.js";
import { text, type TextKey } from "../operator/texts/index.js";
import { renderPage } from "../operator/layout.js";
import type { ConsoleMiddleware } from "../state.js";

/** Programs' paths answer JSON; everything else is a page. */
export function isApiPath(path: string): boolean {
  return path.startsWith("/api/") || path === "/livez" || path === "/readyz";
}

function pageMessage(error: ConsoleError): TextKey {
  if (error.code === "CSRF") return "error.csrf";
  if (error.status === 404) return "error.notFound";
  if (error.status === 403) return "error.forbidden";
  return "error.internal";
}

/**
 * The one place an error becomes a response: JSON `{ error: { code, message } }` for the API,
 * an error page otherwise. Anything unexpected is logged with its stack and answered with a
 * bare 500, so no stack or SQL ever reaches a browser.
 */
export function errorHandler(options: { logger: Logger }): ConsoleMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new ConsoleError(404, "NOT_FOUND", `no route ${ctx.method} ${ctx.path}`);
    } catch (err) {
      let error: ConsoleError;
      if (err instanceof ConsoleError) error = err;
      else {
        options.logger.error({ err }, "unexpected error");
        error = new ConsoleError(500, "INTERNAL_ERROR", "internal error");
      }
      if (error.headers) ctx.set(error.headers);
      if (isApiPath(ctx.path)) {
        ctx.status = error.status;
        ctx.body = { error: { code: error.code, message: error.message } };
        return;
      }
      const lang = ctx.state.lang;
      renderPage(ctx, { title: text(lang, "error.title"), body: html`<p>${text(lang, pageMessage(error))}</p>` }, error.status);
    }
  };
}
