import test from "ava";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The console's rooms stay small: no route handler over 80 lines (a handler that grows gets its
 * steps named and moved out), no source file over 400. Counted on the sources as written, blank
 * lines and comments left out.
 */
const SRC = fileURLToPath(new URL("../src", import.meta.url));
const HANDLER_LIMIT = 80;
const FILE_LIMIT = 400;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sources(full) : entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** Lines that hold code: not blank, not only a comment. */
function codeLines(text: string): number {
  const withoutBlockComments = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ""));
  return withoutBlockComments.split("\n").filter((line) => {
    const t = line.trim();
    return t !== "" && !t.startsWith("//");
  }).length;
}

/**
 * Every route handler's function body in a file (a `handler: …` property, or any async function
 * of `ctx` handed to a route builder), with its size in code lines: from the
 * `{` after the arrow to the brace that closes it (quoted strings skipped; template literals'
 * `${…}` balance themselves).
 */
function handlers(file: string): Array<{ line: number; size: number }> {
  const text = fs.readFileSync(file, "utf8");
  const found: Array<{ line: number; size: number }> = [];
  for (const match of text.matchAll(/(?:\bhandler:\s*(?:async\s*)?(?:\([^)]*\)|\w+)|\basync\s*\(\s*ctx\b[^)]*\))\s*=>\s*\{/g)) {
    const start = match.index + match[0].length - 1;
    let depth = 0;
    let end = start;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (c === '"' || c === "'") {
        const close = text.indexOf(c, i + 1);
        i = close < 0 ? text.length : close;
        continue;
      }
      if (c === "{") depth++;
      else if (c === "}" && --depth === 0) {
        end = i;
        break;
      }
    }
    found.push({ line: text.slice(0, start).split("\n").length, size: codeLines(text.slice(start, end + 1)) });
  }
  return found;
}

test(`no route handler of the console is over ${HANDLER_LIMIT} lines`, (t) => {
  const over = sources(SRC).flatMap((file) => handlers(file).filter((h) => h.size > HANDLER_LIMIT).map((h) => `${path.relative(SRC, file)}:${h.line} (${h.size} lines)`));
  t.deepEqual(over, []);
});

test(`no source file of the console is over ${FILE_LIMIT} lines of code`, (t) => {
  const over = sources(SRC)
    .map((file) => ({ file: path.relative(SRC, file), size: codeLines(fs.readFileSync(file, "utf8")) }))
    .filter((f) => f.size > FILE_LIMIT && !f.file.includes("texts") && !f.file.includes("catalogue"))
    .map((f) => `${f.file} (${f.size})`);
  t.deepEqual(over, [], "texts and catalogues are data and may be long; code is not");
});
