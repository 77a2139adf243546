import { z } from "zod";
import { createDepositBody } from "../routes/deposits.js";
import { amountField, MAX_LIMIT, DEFAULT_LIMIT, pageLimit } from "../routes/route.js";

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as plain JSON. */
export type JsonSchema = Record<string, unknown>;

/**
 * What zod cannot see in the gateway's own input schemas: refinements and transforms (an
 * amount's integer rule, a limit parsed from its query string) and z.custom. Keyed by the
 * very schema objects the routes validate with, so a route that swaps one out loses its
 * override and, for a custom schema, fails the build below instead of documenting `{}`.
 */
const INPUT_OVERRIDES = new Map<z.core.$ZodType, JsonSchema>([
  [amountField, { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Integer in the smallest currency unit (kuruş for TRY)" }],
  [pageLimit, { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }],
  [createDepositBody.shape.metadata.unwrap().unwrap(), { type: "object", additionalProperties: true, description: "Any JSON object; echoed back in the deposit record" }],
]);

/** More overrides for schemas that live in a route's closure or are built by the caller (enum query values). */
export type Overrides = ReadonlyMap<z.core.$ZodType, JsonSchema>;

/** OpenAPI has its own `$schema` default; a component's `$id` would move its `$ref`s' base. */
export function stripRootKeys(schema: JsonSchema): JsonSchema {
  const rest = { ...schema };
  delete rest.$schema;
  delete rest.$id;
  return rest;
}

/**
 * The JSON Schema of a request body or query parameter as a client sends it (zod's input
 * side). A z.custom without an override throws: an unknown shape is never documented as `{}`.
 */
export function inputSchema(schema: z.ZodType, extra: Overrides = new Map()): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema, path }) => {
      const replacement = extra.get(zodSchema) ?? INPUT_OVERRIDES.get(zodSchema);
      if (replacement) {
        for (const key of Object.keys(jsonSchema)) delete (jsonSchema as JsonSchema)[key];
        Object.assign(jsonSchema, structuredClone(replacement));
        return;
      }
      if (zodSchema._zod.def.type === "custom") throw new Error(`openapi: no JSON Schema override for the custom schema at ${path.join(".") || "(root)"}`);
    },
  });
  return stripRootKeys(json);
}

/** The JSON Schema of an answer (zod's output side), without references. */
export function outputSchema(schema: z.ZodType): JsonSchema {
  return stripRootKeys(z.toJSONSchema(schema, { io: "output" }));
}

/** Named output schemas as `components.schemas`, each referring to the others by `#/components/schemas/<name>`. */
export function componentSchemas(schemas: Readonly<Record<string, z.ZodType>>): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const { schemas: out } = z.toJSONSchema(registry, { io: "output", uri: (id) => `#/components/schemas/${id}` }) as { schemas: Record<string, JsonSchema> };
  return Object.fromEntries(Object.entries(out).map(([id, schema]) => [id, stripRootKeys(schema)]));
}
