import { buildOpenApiDocument, type OpenApiDocument } from "./document.js";

export { buildOpenApiDocument, operationErrors, type OpenApiDocument } from "./document.js";
export { OPERATIONS, MERCHANT_ERRORS, type OperationSpec } from "./operations.js";
export * from "./schemas.js";

let cached: { document: OpenApiDocument; json: string } | undefined;

/**
 * The document and its JSON text, built on first use and then kept: it depends only on the
 * code, so one build serves the whole process.
 */
export function openApiDocument(): { document: OpenApiDocument; json: string } {
  if (!cached) {
    const document = buildOpenApiDocument();
    cached = { document, json: serializeOpenApi(document) };
  }
  return cached;
}

/** The committed file's form: two-space indented, keys in build order, a final newline. */
export function serializeOpenApi(document: OpenApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
