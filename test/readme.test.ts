import { readFileSync } from "node:fs";
import test from "ava";
import { GETTING_STARTED } from "../gateway/src/openapi/getting-started.js";

// The README tells a newcomer what happens: it shows the same callback receiver as the docs
// page's getting started (one example, not two that drift), sends them to their browser rather
// than a macOS command, and its SDK example makes the folder it works in.

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** The first ```js block after `heading` in `text`. */
function jsBlockAfter(text: string, heading: string): string {
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`no "${heading}"`);
  const match = /```js\n([\s\S]*?)```/.exec(text.slice(at));
  if (!match) throw new Error(`no js block after "${heading}"`);
  return match[1]!;
}

test("the README's callback receiver is the docs page's, to the character", (t) => {
  t.is(jsBlockAfter(readme, "this receiver, the same as step 5"), jsBlockAfter(GETTING_STARTED, "### 5. Verify the callback"));
});

test("the README's Try it opens pages in the browser and makes the SDK example's folder", (t) => {
  const tryIt = readme.slice(readme.indexOf("## Try it"), readme.indexOf("## Operators' day"));
  t.notRegex(tryIt, /^open /m, "no macOS `open` command");
  t.regex(tryIt, /mkdir -p my-shop && cd my-shop/);
});
