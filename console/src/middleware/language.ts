import { LANGUAGE_COOKIE, readCookie, setCookie } from "../cookies.js";
import { chooseLanguage, isLanguage } from "../shared/i18n.js";
import type { ConsoleMiddleware } from "../state.js";

/** `?lang=tr|en` chooses (and is remembered for a year), else the cookie, else Accept-Language, else Turkish. */
export function language(options: { secure: boolean }): ConsoleMiddleware {
  return async (ctx, next) => {
    const asked = ctx.query.lang;
    if (isLanguage(asked)) setCookie(ctx, LANGUAGE_COOKIE, asked, { secure: options.secure, maxAgeSeconds: 365 * 24 * 3600 });
    ctx.state.lang = chooseLanguage(isLanguage(asked) ? asked : readCookie(ctx, LANGUAGE_COOKIE), ctx.get("accept-language"));
    await next();
  };
}
