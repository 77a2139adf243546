import test from "ava";
import { API_KEY_SCOPES } from "@payments/access";
import { canWithdraw, mayHoldKey, normaliseApiKeyLabel, normaliseScopes, readScopes } from "../src/api-key-rules.js";

// The pure rules of API keys (issue 32): labels, scopes, and who may hold a key that can withdraw.

test("scopes: at least one, known, each once, in the canonical order", (t) => {
  t.deepEqual(normaliseScopes(["withdrawals", "read", "read"]), { ok: true, value: ["read", "withdrawals"] });
  t.deepEqual(normaliseScopes([...API_KEY_SCOPES].reverse()), { ok: true, value: [...API_KEY_SCOPES] });
  t.like(normaliseScopes([]), { ok: false });
  t.like(normaliseScopes(["read", "admin"]), { ok: false, message: '"admin" is not a scope (read, deposits, withdrawals)' });
  t.like(normaliseScopes(["READ"]), { ok: false }, "names are exact");
});

test("a stored scope this version does not know grants nothing; an unreadable column grants nothing", (t) => {
  t.deepEqual(readScopes('["deposits","refunds","read"]'), ["read", "deposits"]);
  t.deepEqual(readScopes("not json"), []);
  t.deepEqual(readScopes('{"read":true}'), []);
});

test("labels are trimmed, 1 to 100 characters, without control or bidirectional characters", (t) => {
  t.deepEqual(normaliseApiKeyLabel("  Ödeme sunucusu "), { ok: true, value: "Ödeme sunucusu" });
  t.like(normaliseApiKeyLabel("   "), { ok: false, message: "is required" });
  t.like(normaliseApiKeyLabel("x".repeat(101)), { ok: false });
  t.deepEqual(normaliseApiKeyLabel("x".repeat(100)), { ok: true, value: "x".repeat(100) });
  t.like(normaliseApiKeyLabel("pay\u202Eouts"), { ok: false });
  t.like(normaliseApiKeyLabel("a\nb"), { ok: false });
});

test("only the owner and finance hold a key that can withdraw; every role that manages keys holds the others", (t) => {
  t.true(canWithdraw(["read", "withdrawals"]));
  t.false(canWithdraw(["read", "deposits"]));
  for (const role of ["owner", "finance"] as const) t.true(mayHoldKey(role, ["withdrawals"]), role);
  for (const role of ["developer", "viewer"] as const) t.false(mayHoldKey(role, ["read", "deposits", "withdrawals"]), role);
  for (const role of ["owner", "finance", "developer"] as const) t.true(mayHoldKey(role, ["read", "deposits"]), role);
});
