import test from "ava";
import { timestampAcceptable } from "../src/timestamp-rule.js";

const now = new Date("2026-11-22T10:00:00.000Z");
const nowSeconds = Math.floor(now.getTime() / 1000);

test("a timestamp exactly 300 s old or ahead is accepted", (t) => {
  t.true(timestampAcceptable(String(nowSeconds), now, 300));
  t.true(timestampAcceptable(String(nowSeconds - 300), now, 300));
  t.true(timestampAcceptable(String(nowSeconds + 300), now, 300));
});

test("a timestamp 301 s old or 301 s ahead is refused", (t) => {
  t.false(timestampAcceptable(String(nowSeconds - 301), now, 300));
  t.false(timestampAcceptable(String(nowSeconds + 301), now, 300));
});

test("sub-second server time does not stretch the window", (t) => {
  const later = new Date(now.getTime() + 999);
  t.true(timestampAcceptable(String(nowSeconds - 300), later, 300));
  t.false(timestampAcceptable(String(nowSeconds - 301), later, 300));
});

test("anything but whole Unix seconds is refused", (t) => {
  for (const value of [`${nowSeconds}.0`, `${nowSeconds}.5`, `-${nowSeconds}`, `+${nowSeconds}`, ` ${nowSeconds}`, `${nowSeconds}abc`, "abc", "", "1e9", `${nowSeconds * 1000}`, "0x1"]) {
    t.false(timestampAcceptable(value, now, 300), value);
  }
});
