import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildOpenApiDocument } from "./document.js";
import { serializeOpenApi } from "./index.js";

/**
 * `pnpm openapi`: writes gateway/openapi.json, the committed copy of the document that the
 * SDK generates its types from. test/openapi.test.ts fails while it differs from the code.
 */
const OPENAPI_FILE = fileURLToPath(new URL("../../openapi.json", import.meta.url));

writeFileSync(OPENAPI_FILE, serializeOpenApi(buildOpenApiDocument()));
console.log(`wrote ${OPENAPI_FILE}`);
