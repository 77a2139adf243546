import { brotliCompressSync, gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import type { ConsoleRoute } from "../route.js";
import type { RouteContext } from "../state.js";
import { CONSOLE_RULES } from "./styles-rules.js";
import { PRIMER_PARTS, primerPart, primitiveTokens, usedTokens } from "./styles-primer.js";

/**
 * The console's one stylesheet: Primer's parts (styles-primer.ts), the tokens they and the
 * console's own rules read, then the console's rules (styles-rules.ts). Built once, on first
 * use, from the installed packages; served as a same-origin file named by its content hash,
 * cached for a year, and linked with its Subresource Integrity hash, so the CSP allows it by
 * `style-src 'self'` and a changed file is never taken for it.
 */
export interface Stylesheet {
  /** `/assets/console.<hash>.css` */
  path: string;
  /** `sha384-…`, for `<link integrity>`. */
  integrity: string;
  etag: string;
  raw: Buffer;
  gzip: Buffer;
  br: Buffer;
}

/** The stylesheet's text: Primer, the tokens read, the console's rules. */
export function stylesheetText(): string {
  const primer = PRIMER_PARTS.map(primerPart).join("\n");
  const rules = CONSOLE_RULES.trim();
  return `/*! Primer CSS (@primer/css, MIT, GitHub Inc.): ${PRIMER_PARTS.join(", ")} */\n${usedTokens(`${primer}\n${rules}`, primitiveTokens())}\n${primer}\n/* the console's own rules */\n${rules}\n`;
}

let built: Stylesheet | undefined;

export function stylesheet(): Stylesheet {
  if (built) return built;
  const raw = Buffer.from(stylesheetText(), "utf8");
  const hex = createHash("sha256").update(raw).digest("hex").slice(0, 16);
  built = {
    path: `/assets/console.${hex}.css`,
    integrity: `sha384-${createHash("sha384").update(raw).digest("base64")}`,
    etag: `"${hex}"`,
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw),
  };
  return built;
}

/** A year, never revalidated: the name changes with the content. */
const IMMUTABLE = "public, max-age=31536000, immutable";

function serve(ctx: RouteContext, sheet: Stylesheet): void {
  ctx.set("Cache-Control", IMMUTABLE);
  ctx.set("ETag", sheet.etag);
  ctx.set("Vary", "Accept-Encoding");
  ctx.type = "text/css; charset=utf-8";
  if (ctx.get("If-None-Match").split(/\s*,\s*/).includes(sheet.etag)) {
    ctx.status = 304;
    return;
  }
  const encoding = ctx.acceptsEncodings("br", "gzip", "identity");
  ctx.status = 200;
  if (encoding === "br" || encoding === "gzip") ctx.set("Content-Encoding", encoding);
  ctx.body = encoding === "br" ? sheet.br : encoding === "gzip" ? sheet.gzip : sheet.raw;
}

/**
 * GET /assets/:file: the stylesheet under its current name (any other name is 404, so an old
 * page's link never gets new rules under an old hash). Both audiences, no session.
 */
export function stylesheetRoutes(): ConsoleRoute[] {
  return [
    {
      method: "GET",
      path: "/assets/:file",
      access: "api",
      handler: (ctx) => {
        const sheet = stylesheet();
        if (`/assets/${ctx.params.file ?? ""}` !== sheet.path) {
          ctx.status = 404;
          ctx.type = "text/plain; charset=utf-8";
          ctx.body = "not found";
          return;
        }
        serve(ctx, sheet);
      },
    },
  ];
}
