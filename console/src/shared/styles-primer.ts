import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * The parts of GitHub's Primer CSS (`@primer/css`, its built `dist/*.css`) the console uses: the
 * base (normalize, type, focus rings), buttons (`.btn`, `.btn-primary`, `.btn-sm`), forms
 * (`.form-control`, `.form-select`) and the header (`.Header`). Utilities, layout and the rest
 * are left out (nothing uses them); a page that wants one adds its file here.
 */
export const PRIMER_PARTS = ["base", "buttons", "forms", "header"] as const;

/**
 * The design tokens those rules read (`var(--…)`), from `@primer/primitives`: the light theme's
 * colours and the sizes and type scale. Only the tokens the stylesheet reads are kept.
 */
const PRIMITIVE_FILES = [
  "functional/themes/light.css",
  "functional/size/size.css",
  "functional/size/border.css",
  "functional/size/radius.css",
  "functional/typography/typography.css",
  "base/size/size.css",
  "base/typography/typography.css",
] as const;

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

/** One built Primer CSS part, without its source-map comment. */
export function primerPart(part: string): string {
  return readFileSync(join(packageDir("@primer/css"), "dist", `${part}.css`), "utf8")
    .replace(/\/\*# sourceMappingURL=[^*]*\*\/\s*$/, "")
    .trim();
}

/**
 * The custom properties declared in the first block of a primitives file (the light theme's
 * `[data-color-mode=light]…{…}`, the sizes' `:root{…}`), comments dropped: name → value.
 */
export function declarationsOf(css: string): Map<string, string> {
  const body = /\{([^{}]*)\}/.exec(css.replace(/\/\*[\s\S]*?\*\//g, ""))?.[1] ?? "";
  const out = new Map<string, string>();
  for (const match of body.matchAll(/(--[A-Za-z0-9_-]+)\s*:\s*([^;]+);/g)) out.set(match[1]!, match[2]!.trim());
  return out;
}

/** Every primitive token Primer declares, the first file that declares a name winning. */
export function primitiveTokens(): Map<string, string> {
  const dir = join(packageDir("@primer/primitives"), "dist", "css");
  const tokens = new Map<string, string>();
  for (const file of PRIMITIVE_FILES) {
    for (const [name, value] of declarationsOf(readFileSync(join(dir, file), "utf8"))) if (!tokens.has(name)) tokens.set(name, value);
  }
  return tokens;
}

const VAR_USE = /var\(\s*(--[A-Za-z0-9_-]+)/g;

/**
 * `:root{…}` with the tokens `css` reads, and those they read in turn (a token's value may be
 * another `var(--…)`), in name order so the output is stable.
 */
export function usedTokens(css: string, tokens: ReadonlyMap<string, string>): string {
  const used = new Set<string>();
  const queue = [...css.matchAll(VAR_USE)].map((m) => m[1]!);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (used.has(name) || !tokens.has(name)) continue;
    used.add(name);
    for (const m of tokens.get(name)!.matchAll(VAR_USE)) queue.push(m[1]!);
  }
  const declarations = [...used].sort().map((name) => `${name}:${tokens.get(name)}`);
  return `:root{${declarations.join(";")}}`;
}
