import { randomBytes } from "node:crypto";
import type { ConsoleMiddleware } from "../state.js";

/**
 * Every response, pages, JSON and errors alike: a strict Content-Security-Policy whose nonce
 * (fresh per request) is the only way an inline style or script runs, the console's own
 * stylesheet the only file it loads (same origin), nothing from any other origin, no framing, no referrer, no sniffing, no caching (pages show accounts and sessions).
 */
export function securityHeaders(): ConsoleMiddleware {
  return async (ctx, next) => {
    const nonce = randomBytes(16).toString("base64");
    ctx.state.nonce = nonce;
    ctx.set({
      "Content-Security-Policy": [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        // The stylesheet is a same-origin file (shared/styles.ts, linked with its integrity hash); a page's own <style> needs the nonce.
        `style-src 'self' 'nonce-${nonce}'`,
        "img-src 'self' data:",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join("; "),
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cross-Origin-Resource-Policy": "same-origin",
      "Cache-Control": "no-store",
    });
    await next();
  };
}
