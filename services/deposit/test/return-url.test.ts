import test from "ava";
import { checkReturnUrl, requireSecureUnlessSandbox, RETURN_URL_MAX_LENGTH } from "../src/return-url.js";
import { errorInfo } from "@payments/kit";

function accepted(raw: string) {
  const checked = checkReturnUrl(raw);
  if (!checked.ok) throw new Error(`refused ${JSON.stringify(raw)}: ${checked.message}`);
  return checked.value;
}

function refusal(raw: string): string {
  const checked = checkReturnUrl(raw);
  if (checked.ok) throw new Error(`accepted ${JSON.stringify(raw)}`);
  return checked.message;
}

test("an https or http return URL is taken trimmed and WHATWG-normalised; empty or blank is none", (t) => {
  t.deepEqual(accepted("https://shop.example/return?order=1001#paid"), { href: "https://shop.example/return?order=1001#paid", secure: true });
  t.deepEqual(accepted("  HTTPS://Shop.Example  "), { href: "https://shop.example/", secure: true });
  t.deepEqual(accepted("http://localhost:3000/back"), { href: "http://localhost:3000/back", secure: false });
  t.deepEqual(accepted("https://örnek.example/sipariş?q=ş"), { href: "https://xn--rnek-4qa.example/sipari%C5%9F?q=%C5%9F", secure: true });
  t.is(accepted(""), null);
  t.is(accepted("   "), null);
});

test("javascript:, data:, other schemes, relative and protocol-relative URLs are refused as not an absolute https URL", (t) => {
  for (const raw of [
    "javascript:alert(1)",
    "JavaScript:alert(document.cookie)",
    "data:text/html,<script>alert(1)</script>",
    "ftp://shop.example/",
    "mailto:shop@example.com",
    "file:///etc/passwd",
    "/return",
    "return.html",
    "//shop.example/return",
    "https:shop.example",
    "https:/shop.example",
    "https:\\\\shop.example",
    "shop.example/return",
  ]) {
    t.is(refusal(raw), "must be an absolute https URL (http only for sandbox merchants)", raw);
  }
});

test("credentials in a return URL are refused, even empty ones the URL parser would drop", (t) => {
  for (const raw of ["https://user:pass@shop.example/", "https://user@shop.example/", "http://a:b@localhost:3000/", "https://@shop.example/", "https://:@shop.example/"]) {
    t.regex(refusal(raw), /must not contain credentials/, raw);
  }
  t.is(accepted("https://shop.example/users/@me")?.href, "https://shop.example/users/@me", "an @ in the path is not a credential");
});

test("control and bidirectional characters are refused, not silently dropped by the parser", (t) => {
  for (const raw of ["java\nscript:alert(1)", "https://shop.example/\tx", "https://shop.example/\u0000", "https://shop.example/\u202Eexe.fdp"]) {
    t.regex(refusal(raw), /control characters or bidirectional overrides/, JSON.stringify(raw));
  }
});

test("a return URL is at most 2,000 characters, as sent and once normalised", (t) => {
  const base = "https://shop.example/";
  t.is(RETURN_URL_MAX_LENGTH, 2000);
  t.is(accepted(base + "a".repeat(2000 - base.length))?.href.length, 2000);
  t.regex(refusal(base + "a".repeat(2001 - base.length)), /at most 2000 characters/);
  // 1,000 characters that each become three once percent-encoded.
  t.regex(refusal(base + " ".repeat(1000) + "x"), /at most 2000 characters once normalised/);
});

test("a URL that cannot be parsed or has no host is refused", (t) => {
  t.is(refusal("https://exa mple.com/"), "is not a valid URL");
  t.is(refusal("https://"), "is not a valid URL");
  t.is(refusal("https://[::1/"), "is not a valid URL");
});

test("http is refused for a live merchant with VALIDATION_ERROR on return_url; https for both, http for sandbox", (t) => {
  const http = accepted("http://localhost:3000/back");
  const https = accepted("https://shop.example/back");
  t.notThrows(() => requireSecureUnlessSandbox(http, true));
  t.notThrows(() => requireSecureUnlessSandbox(https, false));
  t.notThrows(() => requireSecureUnlessSandbox(null, false));
  const err = t.throws(() => requireSecureUnlessSandbox(http, false));
  t.like(errorInfo(err), { reason: "VALIDATION_ERROR", field: "return_url", message: "return_url: must use https (http only for sandbox merchants)" });
});
