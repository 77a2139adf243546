import { randomBytes } from "node:crypto";
import { basePathOf } from "../checkout/page.js";
import { loadScalarBundle, prepareAsset, type DocsAsset } from "../docs/assets.js";
import { docsSecurityHeaders, initScript, renderDocsPage } from "../docs/page.js";
import { ApiError } from "../errors.js";
import type { RouteContext } from "../state.js";
import type { Route } from "./route.js";

/** A year, and never revalidated: the file name changes with the content. */
const IMMUTABLE = "public, max-age=31536000, immutable";

/** The compressed form the client takes, best first. */
function encodingFor(ctx: RouteContext): "br" | "gzip" | undefined {
  const accepted = ctx.acceptsEncodings("br", "gzip", "identity");
  return accepted === "br" || accepted === "gzip" ? accepted : undefined;
}

function serveAsset(ctx: RouteContext, asset: DocsAsset): void {
  ctx.set("Cache-Control", IMMUTABLE);
  ctx.set("ETag", asset.etag);
  ctx.set("Vary", "Accept-Encoding");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("Cross-Origin-Resource-Policy", "same-origin");
  ctx.type = asset.type;
  if (ctx.get("If-None-Match").split(/\s*,\s*/).includes(asset.etag)) {
    ctx.status = 304;
    return;
  }
  const encoding = encodingFor(ctx);
  ctx.status = 200;
  if (encoding) ctx.set("Content-Encoding", encoding);
  ctx.body = encoding === "br" ? asset.br : encoding === "gzip" ? asset.gzip : asset.raw;
}

/**
 * GET /: the address `pnpm start` names for a browser leads to the API reference (302 to
 * /docs); nothing else lives at the root. And GET /docs: the API reference, Scalar rendering GET /openapi.json; and GET /docs/assets/:file,
 * the page's two scripts (Scalar's standalone bundle from the installed package, and the
 * few lines that mount it), named by content hash and cached for a year. Public, like the
 * checkout; nothing on the page comes from another origin, and its CSP makes sure of it.
 */
export function docs(deps: { publicBaseUrl: string }): Route[] {
  const basePath = basePathOf(deps.publicBaseUrl);
  let init: Promise<DocsAsset> | undefined;
  const initAsset = () => (init ??= prepareAsset("init", "js", "application/javascript; charset=utf-8", Buffer.from(initScript(basePath))));
  const assets = async (): Promise<DocsAsset[]> => Promise.all([loadScalarBundle(), initAsset()]);

  return [
    {
      method: "GET",
      path: "/",
      access: "public",
      handler: (ctx) => {
        ctx.set("Cache-Control", "no-cache");
        ctx.redirect(`${basePath}/docs`);
      },
    },
    {
      method: "GET",
      path: "/docs",
      access: "public",
      handler: async (ctx) => {
        const [scalar, init] = await assets();
        const nonce = randomBytes(16).toString("base64");
        ctx.set(docsSecurityHeaders(nonce));
        ctx.type = "text/html; charset=utf-8";
        ctx.body = renderDocsPage({
          nonce,
          scalarSrc: `${basePath}/docs/assets/${scalar!.file}`,
          initSrc: `${basePath}/docs/assets/${init!.file}`,
          openapiHref: `${basePath}/openapi.json`,
        });
      },
    },
    {
      method: "GET",
      path: "/docs/assets/:file",
      access: "public",
      handler: async (ctx) => {
        const asset = (await assets()).find((candidate) => candidate.file === ctx.params.file);
        if (!asset) throw new ApiError(404, "NOT_FOUND", "No such file");
        serveAsset(ctx, asset);
      },
    },
  ];
}
