import { openApiDocument } from "../openapi/index.js";
import type { Route } from "./route.js";

/**
 * GET /openapi.json: the OpenAPI document of the merchant API, public (the reference page
 * and code generators load it without credentials). Built once per process, on the first
 * request, so creating an app stays cheap.
 */
export function openapi(): Route[] {
  return [
    {
      method: "GET",
      path: "/openapi.json",
      access: "public",
      handler: (ctx) => {
        ctx.set("Cache-Control", "public, max-age=300");
        ctx.type = "application/json";
        ctx.body = openApiDocument().json;
      },
    },
  ];
}
