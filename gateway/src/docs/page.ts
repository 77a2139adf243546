/**
 * The API reference page: Scalar's standalone bundle rendering the gateway's own
 * /openapi.json. Everything comes from the gateway; the CSP lets the browser load nothing
 * from anywhere else, so a Scalar feature that would reach out is blocked, not just unused.
 */

/** Scalar's configuration: nothing that calls another origin, nothing that cannot work here. */
export function scalarConfiguration(basePath: string): Record<string, unknown> {
  return {
    url: `${basePath}/openapi.json`,
    title: "Payments gateway API",
    // Scalar's default fonts come from fonts.scalar.com; the system's are used instead (customCss).
    withDefaultFonts: false,
    telemetry: false,
    // No proxyUrl: "try it" would go through proxy.scalar.com. And a request needs an HMAC
    // signature the browser cannot make without the secret, so the client is hidden altogether.
    hideClientButton: true,
    hideTestRequestButton: true,
    // The AI agent and the MCP button talk to scalar.com; the developer tools and toolbar offer sharing and deploying there.
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
    isEditable: false,
    persistAuth: false,
    documentDownloadType: "json",
    // Every operation on the page at once (and so findable with the browser's own search).
    defaultOpenAllTags: true,
    defaultHttpClient: { targetKey: "node", clientKey: "fetch" },
    customCss: [
      ".scalar-app, .scalar-api-reference {",
      "  --scalar-font: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;",
      "  --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace;",
      "}",
    ].join("\n"),
  };
}

/** The page's own script, loaded before Scalar's: mounts Scalar with the configuration above. Served as a file, so the page needs no inline script. */
export function initScript(basePath: string): string {
  return `"use strict";
(() => {
  // Runs before Scalar's bundle. Scalar puts this page's nonce on its main stylesheet only;
  // the other <style> elements it adds (toasts, theme, custom CSS) get it here, so the CSP
  // needs no 'unsafe-inline' for style elements.
  const nonce = document.querySelector('meta[property="csp-nonce"]')?.content ?? "";
  const createElement = Document.prototype.createElement;
  Document.prototype.createElement = function (tagName, options) {
    const element = createElement.call(this, tagName, options);
    if (nonce && String(tagName).toLowerCase() === "style") element.nonce = nonce;
    return element;
  };
  const configuration = ${JSON.stringify(scalarConfiguration(basePath))};
  // After the bundle (the next script) has run.
  document.addEventListener("DOMContentLoaded", () => window.Scalar.createApiReference("#app", configuration));
})();
`;
}

/**
 * The headers of the page. Scripts: only this origin's files. Styles: this origin's and the
 * ones carrying this response's nonce (Scalar's bundle injects its stylesheet with the nonce
 * it finds in `<meta property="csp-nonce">`, the page's own script gives it to the rest);
 * style attributes are allowed. Requests (the OpenAPI document): this origin.
 */
export function docsSecurityHeaders(nonce: string): Record<string, string> {
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    // Style attributes cannot carry a nonce, and Scalar's components set a few from markup.
    // They can load nothing (img-src and font-src are 'self'), and scripts stay 'self' only.
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ];
  return {
    "Content-Security-Policy": policy.join("; "),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    // The nonce is new on every response, so the page itself is never reused.
    "Cache-Control": "no-store",
  };
}

const escapeAttribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

export function renderDocsPage(options: { nonce: string; scalarSrc: string; initSrc: string; openapiHref: string }): string {
  const { nonce, scalarSrc, initSrc, openapiHref } = options;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta property="csp-nonce" content="${escapeAttribute(nonce)}">
<title>Payments gateway API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>The API reference needs JavaScript. The OpenAPI document itself is at <a href="${escapeAttribute(openapiHref)}">${escapeAttribute(openapiHref)}</a>.</noscript>
<div id="app"></div>
<script src="${escapeAttribute(initSrc)}"></script>
<script src="${escapeAttribute(scalarSrc)}"></script>
</body>
</html>
`;
}
