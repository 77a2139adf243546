#!/usr/bin/env node
// In the repository (src/ is here) the CLI runs its TypeScript sources through tsx, with the
// `source` export condition so every workspace package resolves to its src/ too: `pnpm cli …`
// needs no build step and never runs a stale dist/. Where only the compiled package exists
// (the Docker image: `pnpm deploy` ships dist/, not src/), it runs dist/main.js with plain node.
import { existsSync } from "node:fs";
import { register } from "node:module";

const source = new URL("../src/main.ts", import.meta.url);
if (existsSync(source)) {
  const { register: registerTsx } = await import("tsx/esm/api");
  registerTsx();
  // Registered last, so it runs first: adds the condition, then hands on to tsx's resolver.
  register(
    "data:text/javascript,export async function resolve(specifier, context, next) { return next(specifier, { ...context, conditions: [...context.conditions, 'source'] }); }",
  );
  await import(source.href);
} else {
  await import(new URL("../dist/main.js", import.meta.url).href);
}
