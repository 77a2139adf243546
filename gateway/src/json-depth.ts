/**
 * How deep a nesting of JSON objects and arrays a request may carry. Parsing any depth is
 * safe, but serialising one is recursive (JSON.stringify throws a RangeError a few thousand
 * levels down, and so would the services and the callback sender that store and send it
 * back), so depth is refused at the edge, long before that, with the field it is in.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Levels of objects and arrays in a parsed JSON value: a scalar is 0, `{}` and `[]` are 1,
 * `{"a": [1]}` is 2. Walks with its own stack, so no depth can overflow the call stack, and
 * stops as soon as it is past `stopAbove`.
 */
export function jsonDepth(value: unknown, stopAbove: number = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, above] = item;
    if (typeof node !== "object" || node === null) continue;
    const depth = above + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > stopAbove) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth]);
  }
  return deepest;
}
