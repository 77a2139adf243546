import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import { openApiDocument, type OpenApiDocument } from "../gateway/src/openapi/index.js";

/*
 * The response check of the end-to-end suites: every answer the tests get from a documented
 * route must be one the OpenAPI document describes, status and body. signedFetch
 * (test/helpers.ts) and call (gateway/test/http-client.ts) run it on every response, so the
 * document stays true to what the gateway really answers.
 */

/** Thrown when an answer is not one the document describes. */
export class OpenApiMismatch extends Error {
  override name = "OpenApiMismatch";
}

interface CompiledPath {
  template: string;
  pattern: RegExp;
  methods: Record<string, Record<string, unknown>>;
}

const DOC_ID = "https://payments.invalid/openapi.json";

/** JSON Pointer escaping of one reference token. */
const pointerToken = (token: string) => token.replaceAll("~", "~0").replaceAll("/", "~1");

/** `/v1/deposit/{transactionId}` → a regex matching one path segment per parameter; a trailing slash is tolerated, as the router does. */
function templatePattern(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}/?$`);
}

export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  private readonly paths: CompiledPath[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {
    // Not strict: the document carries OpenAPI keys (paths, example) ajv does not know; the
    // schemas themselves are checked by @readme/openapi-parser in test/openapi.test.ts.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema({ ...structuredClone(document), $id: DOC_ID });
    this.paths = Object.entries(document.paths).map(([template, methods]) => ({ template, pattern: templatePattern(template), methods }));
    // Literal paths before templated ones: /v1/deposit is not /v1/deposit/{transactionId}.
    this.paths.sort((a, b) => Number(a.template.includes("{")) - Number(b.template.includes("{")));
  }

  /** The documented path template a request path (query ignored) falls under, if any. */
  pathTemplate(path: string): string | undefined {
    const pathname = path.split("?")[0]!;
    return this.paths.find((p) => p.pattern.test(pathname))?.template;
  }

  /**
   * Throws OpenApiMismatch unless the document has this operation, this status for it, and
   * a schema the body matches (for a non-JSON `contentType`, that media type documented). Paths the document does not describe (/healthz, /checkout…)
   * are not checked; a documented path with an undocumented method must be 405, whose body
   * must be the 405 its operations document.
   */
  check(method: string, path: string, status: number, body: unknown, contentType?: string): void {
    const template = this.pathTemplate(path);
    if (template === undefined) return;
    const verb = method.toLowerCase();
    const where = `${method.toUpperCase()} ${path} → ${status}`;
    // HEAD answers carry no body: nothing to compare.
    if (verb === "head") return;
    const methods = this.document.paths[template]!;
    let documented = verb;
    if (!Object.hasOwn(methods, verb)) {
      if (status === 404) return;
      if (status !== 405) throw new OpenApiMismatch(`${where}: ${template} documents no ${method.toUpperCase()}, so only 405 is expected`);
      // Another method on a documented path: its 405 is the one every operation of the path documents.
      documented = Object.keys(methods)[0]!;
    }
    const responses = (methods[documented] as { responses: Record<string, unknown> }).responses;
    if (!Object.hasOwn(responses, String(status))) {
      throw new OpenApiMismatch(`${where}: status ${status} is not documented for ${documented.toUpperCase()} ${template} (documented: ${Object.keys(responses).join(", ")})`);
    }
    // A non-JSON answer (text/csv): its media type must be documented; its text has no schema to check.
    const mediaType = contentType?.split(";")[0]!.trim().toLowerCase();
    if (mediaType && mediaType !== "application/json" && !mediaType.endsWith("+json")) {
      const content = (responses[String(status)] as { content?: Record<string, unknown> }).content ?? {};
      if (!Object.hasOwn(content, mediaType)) throw new OpenApiMismatch(`${where}: ${mediaType} is not documented (documented: ${Object.keys(content).join(", ")})`);
      return;
    }
    const validate = this.validator(template, documented, String(status));
    if (!validate(body)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message ?? ""}${Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`);
      throw new OpenApiMismatch(`${where}: the body does not match the documented response:\n  ${problems.join("\n  ")}\nbody: ${JSON.stringify(body).slice(0, 2000)}`);
    }
  }

  private validator(template: string, verb: string, status: string): ValidateFunction {
    const key = `${verb} ${template} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      let response = (this.document.paths[template]![verb] as { responses: Record<string, { $ref?: string }> }).responses[status]!;
      let pointer = `#/paths/${pointerToken(template)}/${verb}/responses/${status}`;
      if (response.$ref) {
        pointer = response.$ref;
        const name = response.$ref.split("/").pop()!;
        response = (this.document.components.responses as Record<string, { $ref?: string }>)[name]!;
      }
      if (!(response as { content?: Record<string, unknown> }).content?.["application/json"]) throw new OpenApiMismatch(`${key}: no application/json schema documented`);
      validate = this.ajv.compile({ $ref: `${DOC_ID}${pointer}/content/application~1json/schema` });
      this.validators.set(key, validate);
    }
    return validate;
  }
}

let shared: OpenApiChecker | undefined;

/** The checker of the gateway's own document, built once per test process. */
export function openApiChecker(): OpenApiChecker {
  return (shared ??= new OpenApiChecker(openApiDocument().document));
}

/** Checks one answer against the gateway's document; see OpenApiChecker.check. */
export function checkOpenApiResponse(method: string, path: string, status: number, body: unknown, contentType?: string): void {
  openApiChecker().check(method, path, status, body, contentType);
}
