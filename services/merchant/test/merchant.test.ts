import test from "ava";
import {
  ALLOWED_IPS_MAX,
  checkRateLimit,
  DEFAULT_PAYMENT_RULES,
  DISPLAY_NAME_MAX_LENGTH,
  LATE_PAYMENT_RULES,
  OVERPAYMENT_RULES,
  readRule,
  UNDERPAYMENT_RULES,
  expiryAfterRotation,
  ipAllowed,
  normaliseAllowedIps,
  normaliseCallbackUrl,
  normaliseDisplayName,
  normaliseIpEntry,
  normaliseName,
  secretValidAt,
} from "../src/merchant.js";

function value<T>(checked: { ok: true; value: T } | { ok: false; message: string }): T {
  if (!checked.ok) throw new Error(`refused: ${checked.message}`);
  return checked.value;
}

test("names are trimmed and must be 1 to 200 characters", (t) => {
  t.is(value(normaliseName("  Acme Ltd  ")), "Acme Ltd");
  t.is(value(normaliseName("x".repeat(200))), "x".repeat(200));
  t.false(normaliseName("   ").ok);
  t.false(normaliseName("").ok);
  t.false(normaliseName("x".repeat(201)).ok);
});

test("names holding control characters or bidirectional overrides are refused", (t) => {
  for (const bad of ["Acme\u0000", "Ac\rme", "Ac\nme", "Acme\u0007", "\u202EemcA", "Acme \u202A", "Ac\u2066me\u2069", "Acme\u007F", "Acme\u0085"]) {
    const checked = normaliseName(bad);
    t.false(checked.ok, JSON.stringify(bad));
    if (!checked.ok) t.regex(checked.message, /control characters or bidirectional overrides/);
  }
  t.is(value(normaliseName("Şeker Ödeme A.Ş.")), "Şeker Ödeme A.Ş.", "Turkish letters are fine");
});

test("display names are trimmed, 1 to 100 characters; empty or blank means none (the name is shown)", (t) => {
  t.is(DISPLAY_NAME_MAX_LENGTH, 100);
  t.is(value(normaliseDisplayName("  Örnek Mağaza  ")), "Örnek Mağaza", "trimmed; Turkish letters are fine");
  t.is(value(normaliseDisplayName("x".repeat(100))), "x".repeat(100));
  t.is(value(normaliseDisplayName(`  ${"x".repeat(100)}  `)), "x".repeat(100), "the limit counts after trimming");
  t.is(value(normaliseDisplayName("")), null);
  t.is(value(normaliseDisplayName("   ")), null);
  const long = normaliseDisplayName("x".repeat(101));
  t.false(long.ok);
  if (!long.ok) t.regex(long.message, /at most 100 characters/);
});

test("display names holding control characters or bidirectional overrides are refused", (t) => {
  for (const bad of ["Örnek\u0000", "Ör\rnek", "Ör\nnek", "\u202EkenrÖ", "Örnek \u202A", "Ör\u2066nek\u2069", "Örnek\u007F", "Örnek\u0085"]) {
    const checked = normaliseDisplayName(bad);
    t.false(checked.ok, JSON.stringify(bad));
    if (!checked.ok) t.regex(checked.message, /control characters or bidirectional overrides/);
  }
});

test("IPv4 addresses and CIDRs are normalised to the network address", (t) => {
  t.is(value(normaliseIpEntry(" 203.0.113.7 ")), "203.0.113.7");
  t.is(value(normaliseIpEntry("203.0.113.7/24")), "203.0.113.0/24");
  t.is(value(normaliseIpEntry("10.1.2.3/8")), "10.0.0.0/8");
  t.is(value(normaliseIpEntry("203.0.113.7/32")), "203.0.113.7", "a full-length prefix is the bare address");
});

test("IPv6 addresses and CIDRs are normalised to RFC 5952 form", (t) => {
  t.is(value(normaliseIpEntry("2001:DB8:0:0:0:0:0:1")), "2001:db8::1");
  t.is(value(normaliseIpEntry("2001:db8:abcd:12:ffff::1/48")), "2001:db8:abcd::/48");
  t.is(value(normaliseIpEntry("::1/128")), "::1");
  t.is(value(normaliseIpEntry("2001:0db8::/32")), "2001:db8::/32");
});

test("IPv4-mapped IPv6 entries become the IPv4 they are", (t) => {
  t.is(value(normaliseIpEntry("::ffff:198.51.100.9")), "198.51.100.9");
  t.is(value(normaliseIpEntry("::ffff:c633:6409")), "198.51.100.9");
  t.is(value(normaliseIpEntry("::ffff:198.51.100.0/120")), "198.51.100.0/24");
});

test("an entry that admits every address is refused, so an allow-list always narrows", (t) => {
  for (const everyone of ["0.0.0.0/0", "::/0", "1.2.3.4/0", "2001:db8::/0", "::ffff:0.0.0.0/96"]) {
    const checked = normaliseIpEntry(everyone);
    t.false(checked.ok, everyone);
    if (!checked.ok) t.regex(checked.message, /admits every address/);
  }
  t.false(normaliseAllowedIps(["203.0.113.7", "0.0.0.0/0"]).ok, "one such entry refuses the whole list");
  t.is(value(normaliseIpEntry("0.0.0.0/1")), "0.0.0.0/1", "a wide range that is not everything stays allowed");
});

test("garbage, legacy IPv4 forms, bad prefixes and zone ids are refused", (t) => {
  for (const bad of [
    "",
    "nope",
    "example.com",
    "1.2.3",
    "10.1",
    "167772161",
    "0x0a.0.0.1",
    "256.1.1.1",
    "1.2.3.4/33",
    "1.2.3.4/",
    "1.2.3.4/-1",
    "1.2.3.4/8/8",
    "2001:db8::/129",
    "2001:db8::g",
    "fe80::1%eth0",
    "1.2.3.4 5.6.7.8",
  ]) {
    const checked = normaliseIpEntry(bad);
    t.false(checked.ok, `accepted ${JSON.stringify(bad)}`);
  }
});

test("the allow-list is deduplicated after normalisation, keeping first-seen order", (t) => {
  t.deepEqual(value(normaliseAllowedIps(["10.0.0.1", "2001:db8::1", "10.0.0.1/32", "::ffff:10.0.0.1", "2001:DB8::1", "10.0.0.0/8"])), [
    "10.0.0.1",
    "2001:db8::1",
    "10.0.0.0/8",
  ]);
  t.deepEqual(value(normaliseAllowedIps([])), []);
});

test("the allow-list holds at most 100 entries and one bad entry refuses it all", (t) => {
  const hundred = Array.from({ length: ALLOWED_IPS_MAX }, (_, i) => `10.0.${Math.floor(i / 256)}.${i % 256}`);
  t.is(value(normaliseAllowedIps(hundred)).length, 100);
  t.false(normaliseAllowedIps([...hundred, "10.9.9.9"]).ok);
  t.true(normaliseAllowedIps([...hundred, hundred[0]!]).ok, "duplicates do not count");
  const bad = normaliseAllowedIps(["10.0.0.1", "bogus"]);
  t.false(bad.ok);
  if (!bad.ok) t.regex(bad.message, /bogus/);
});

test("a caller is allowed when an entry covers its address, across IPv4, IPv6 and mapped forms", (t) => {
  const list = value(normaliseAllowedIps(["10.0.0.0/8", "2001:db8::/32", "198.51.100.9"]));
  t.true(ipAllowed(list, "10.200.3.4"));
  t.true(ipAllowed(list, "::ffff:10.200.3.4"));
  t.true(ipAllowed(list, "2001:db8:1::5"));
  t.true(ipAllowed(list, "198.51.100.9"));
  t.false(ipAllowed(list, "198.51.100.10"));
  t.false(ipAllowed(list, "11.0.0.1"));
  t.false(ipAllowed(list, "2001:db9::1"));
  t.false(ipAllowed(list, "not an ip"));
  t.false(ipAllowed([], "10.0.0.1"));
});

test("callback URLs must be https, or http only on localhost, 127.0.0.1 or [::1]", (t) => {
  t.is(value(normaliseCallbackUrl("https://merchant.example/callbacks?x=1")), "https://merchant.example/callbacks?x=1");
  t.is(value(normaliseCallbackUrl(" https://merchant.example ")), "https://merchant.example/");
  t.is(value(normaliseCallbackUrl("http://localhost:3000/cb")), "http://localhost:3000/cb");
  t.is(value(normaliseCallbackUrl("http://127.0.0.1:8080/cb")), "http://127.0.0.1:8080/cb");
  t.is(value(normaliseCallbackUrl("http://[::1]:8080/cb")), "http://[::1]:8080/cb");
  t.is(value(normaliseCallbackUrl("")), null, "empty clears the URL");
  t.is(value(normaliseCallbackUrl("   ")), null);
  for (const bad of [
    "http://merchant.example/cb",
    "http://10.0.0.1/cb",
    "http://localhost.evil.example/cb",
    "ftp://merchant.example/cb",
    "javascript:alert(1)",
    "merchant.example/cb",
    "https://user:pass@merchant.example/cb",
    "https://merchant.example/cb#frag",
    `https://merchant.example/${"a".repeat(2048)}`,
  ]) {
    t.false(normaliseCallbackUrl(bad).ok, `accepted ${bad.slice(0, 60)}`);
  }
  t.true(normaliseCallbackUrl(`https://m.example/${"a".repeat(2048 - "https://m.example/".length)}`).ok, "2048 characters is allowed");
});

test("rate limits: unset means default, 0 means off, a burst below the rate is refused", (t) => {
  t.deepEqual(value(checkRateLimit(undefined, undefined)), { perSecond: null, burst: null });
  t.deepEqual(value(checkRateLimit(0, undefined)), { perSecond: 0, burst: null });
  t.deepEqual(value(checkRateLimit(50, 50)), { perSecond: 50, burst: 50 });
  t.deepEqual(value(checkRateLimit(undefined, 10)), { perSecond: null, burst: 10 });
  const low = checkRateLimit(50, 49);
  t.false(low.ok);
  if (!low.ok) t.is(low.field, "burst");
  const huge = checkRateLimit(2 ** 32 - 1, undefined);
  t.false(huge.ok);
  if (!huge.ok) t.is(huge.field, "perSecond");
});

test("a secret verifies until, not at, its expiry; the current one has none", (t) => {
  t.true(secretValidAt({ expiresAt: null }, 1_000));
  t.true(secretValidAt({ expiresAt: 2_000 }, 1_999));
  t.false(secretValidAt({ expiresAt: 2_000 }, 2_000));
  t.false(secretValidAt({ expiresAt: 2_000 }, 5_000));
});

test("rotation gives older secrets now + grace, but never extends an earlier expiry", (t) => {
  t.is(expiryAfterRotation(null, 1_000, 500), 1_500);
  t.is(expiryAfterRotation(1_200, 1_000, 500), 1_200);
  t.is(expiryAfterRotation(9_000, 1_000, 500), 1_500);
  t.is(expiryAfterRotation(null, 1_000, 0), 1_000);
});

test("a stored paid-amount rule the service does not know reads as review, which never moves money", (t) => {
  t.is(readRule(LATE_PAYMENT_RULES, "return"), "return");
  t.is(readRule(OVERPAYMENT_RULES, "complete"), "complete");
  t.is(readRule(OVERPAYMENT_RULES, "refund"), "review");
  t.is(readRule(UNDERPAYMENT_RULES, "return"), "review", "a rule of another kind is not taken");
  t.deepEqual(DEFAULT_PAYMENT_RULES, { underpayment: "review", overpayment: "complete", latePayment: "review" });
});
