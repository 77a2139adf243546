import test from "ava";
import { randomBytes } from "node:crypto";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, needsRehash, passwordProblem, verifyPassword } from "../src/identity/password.js";
import { hashSecret, newSecret, sameSecret } from "../src/identity/secret-token.js";
import { addressKey, SignInThrottle } from "../src/identity/sign-in-throttle.js";
import { newTotpSecret, totpCode, totpSealer, totpStep, totpUri } from "../src/identity/totp.js";

/*
 * The identity pieces without a database: passwords' rules, secrets at rest, TOTP codes and the
 * sealing of their keys, and the sign-in throttle's counting (what test/throttle.test.ts does
 * not reach through the pages: addresses, windows, known places, memory bounds).
 */

test("a password is counted in characters, not bytes or UTF-16 units", (t) => {
  t.is(passwordProblem("ş".repeat(MIN_PASSWORD_LENGTH)), undefined, "twelve Turkish letters are twelve characters");
  t.is(passwordProblem("😀".repeat(MIN_PASSWORD_LENGTH - 1)), "too_short", "eleven emoji are eleven characters, not twenty-two");
  t.is(passwordProblem("a".repeat(MAX_PASSWORD_LENGTH)), undefined);
  t.is(passwordProblem("a".repeat(MAX_PASSWORD_LENGTH + 1)), "too_long");
  t.is(passwordProblem("😀".repeat(MAX_PASSWORD_LENGTH)), undefined);
  t.is(passwordProblem(""), "too_short");
});

test("a password is compared in its NFKC form: the same letters typed either way verify", async (t) => {
  const composed = "Şifre çok gizli ğ";
  const decomposed = composed.normalize("NFD");
  t.not(composed, decomposed);
  const stored = await hashPassword(composed);
  t.true(await verifyPassword(decomposed, stored));
  t.false(await verifyPassword(composed.toUpperCase(), stored), "case still matters");
});

test("a password over the limit never verifies, not even against its own hash's prefix", async (t) => {
  const stored = await hashPassword("correct horse battery staple");
  t.false(await verifyPassword("x".repeat(MAX_PASSWORD_LENGTH + 1), stored));
});

test("a tampered hash with absurd or malformed parameters never verifies and asks to be rehashed", async (t) => {
  const salt = randomBytes(16).toString("base64");
  const key = randomBytes(64).toString("base64");
  const bad = [
    `scrypt$${2 ** 21}$8$1$${salt}$${key}`,
    `scrypt$1000$8$1$${salt}$${key}`,
    `scrypt$16384$0$1$${salt}$${key}`,
    `scrypt$16384$33$1$${salt}$${key}`,
    `scrypt$16384$8$17$${salt}$${key}`,
    `scrypt$16384$8$1$${randomBytes(8).toString("base64")}$${key}`,
    `scrypt$16384$8$1$${salt}$${randomBytes(16).toString("base64")}`,
    `bcrypt$16384$8$1$${salt}$${key}`,
    `scrypt$16384$8$1$${salt}`,
    "",
  ];
  for (const stored of bad) {
    t.false(await verifyPassword("anything at all", stored), stored);
    t.true(needsRehash(stored), stored);
  }
});

test("a hash with today's parameters needs no rehash", async (t) => {
  t.false(needsRehash(await hashPassword("correct horse battery staple")));
});

test("a secret's stored form is its SHA-256 in hex, the same every time", (t) => {
  t.is(hashSecret("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  t.is(hashSecret("ş"), hashSecret("ş"));
  t.not(hashSecret("a"), hashSecret("b"));
});

test("a new secret is 32 random bytes in base64url with its hash, never the same twice", (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const { secret, hash } = newSecret();
    t.regex(secret, /^[A-Za-z0-9_-]{43}$/);
    t.is(hash, hashSecret(secret));
    t.false(seen.has(secret));
    seen.add(secret);
  }
});

test("sameSecret is true only for the same text, whatever the lengths", (t) => {
  t.true(sameSecret("token", "token"));
  t.true(sameSecret("", ""));
  t.false(sameSecret("token", "tokeN"));
  t.false(sameSecret("token", "token2"));
  t.false(sameSecret("", "x"));
  t.false(sameSecret("é", "e\u0301"), "no normalisation of secrets");
});

test("a TOTP secret is 160 bits in base32 and new every time", (t) => {
  const a = newTotpSecret();
  t.regex(a, /^[A-Z2-7]{32}$/);
  t.not(newTotpSecret(), a);
});

test("the otpauth URI names the issuer and the account and carries the standard settings", (t) => {
  const secret = newTotpSecret();
  const uri = totpUri(secret, "ayşe@example.com");
  t.regex(uri, /^otpauth:\/\/totp\//);
  const url = new URL(uri);
  t.is(url.searchParams.get("secret"), secret);
  t.is(url.searchParams.get("issuer"), "Payments console");
  t.is(url.searchParams.get("digits"), "6");
  t.is(url.searchParams.get("period"), "30");
  t.is(url.searchParams.get("algorithm"), "SHA1");
  t.true(decodeURIComponent(url.pathname).includes("ayşe@example.com"));
});

test("a code is valid in its step and one step either side, and no further", (t) => {
  const secret = newTotpSecret();
  const now = new Date("2026-12-08T10:00:15Z");
  const step = Math.floor(now.getTime() / 30_000);
  const code = totpCode(secret, now);
  t.regex(code, /^\d{6}$/);
  t.is(totpStep(secret, code, now), step);
  t.is(totpStep(secret, code, new Date(now.getTime() + 30_000)), step, "typed in the next step");
  t.is(totpStep(secret, code, new Date(now.getTime() - 30_000)), step, "a clock running behind");
  const late = totpStep(secret, code, new Date(now.getTime() + 61_000));
  t.true(late === undefined || late !== step, "two steps later it is no longer this step's code");
});

test("a code is read without its spaces and must be six digits", (t) => {
  const secret = newTotpSecret();
  const now = new Date("2026-12-08T10:00:00Z");
  const code = totpCode(secret, now);
  t.is(totpStep(secret, `${code.slice(0, 3)} ${code.slice(3)}`, now), Math.floor(now.getTime() / 30_000));
  for (const bad of ["", "12345", "1234567", "abcdef", `${code}x`, "-12345"]) t.is(totpStep(secret, bad, now), undefined, bad);
});

test("another account's code is refused", (t) => {
  const now = new Date("2026-12-08T10:00:00Z");
  const mine = newTotpSecret();
  let other = newTotpSecret();
  // Six digits collide once in a million: pick another secret whose code differs.
  while (totpCode(other, now) === totpCode(mine, now)) other = newTotpSecret();
  t.is(totpStep(mine, totpCode(other, now), now), undefined);
});

test("without a key a TOTP secret is kept plain and opens as it was", (t) => {
  const sealer = totpSealer(undefined);
  const secret = newTotpSecret();
  t.is(sealer.seal(secret), `plain.${secret}`);
  t.is(sealer.open(`plain.${secret}`), secret);
});

test("with a key a TOTP secret is sealed with AES-GCM, differently each time, and opens to itself", (t) => {
  const sealer = totpSealer(randomBytes(32));
  const secret = newTotpSecret();
  const a = sealer.seal(secret);
  const b = sealer.seal(secret);
  t.regex(a, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  t.not(a, b, "a fresh IV each time");
  t.false(a.includes(secret));
  t.is(sealer.open(a), secret);
  t.is(sealer.open(b), secret);
});

test("a key introduced later still opens the plain secrets kept before it", (t) => {
  const secret = newTotpSecret();
  t.is(totpSealer(randomBytes(32)).open(totpSealer(undefined).seal(secret)), secret);
});

test("a sealed secret does not open with another key, without a key, or tampered with", (t) => {
  const secret = newTotpSecret();
  const sealed = totpSealer(randomBytes(32)).seal(secret);
  t.throws(() => totpSealer(randomBytes(32)).open(sealed));
  t.throws(() => totpSealer(undefined).open(sealed), { message: /CONSOLE_TOTP_KEY/ });
  const key = randomBytes(32);
  const mine = totpSealer(key).seal(secret);
  const parts = mine.split(".");
  const flipped = Buffer.from(parts[3]!, "base64url");
  flipped[0] = flipped[0]! ^ 1;
  t.throws(() => totpSealer(key).open([parts[0], parts[1], parts[2], flipped.toString("base64url")].join(".")));
  for (const junk of ["v2.a.b.c", "v1.a.b", "garbage", ""]) t.throws(() => totpSealer(key).open(junk), { message: /unreadable/ }, junk);
});

test("an IPv4 address is counted as it is, an IPv4-mapped IPv6 one as its IPv4", (t) => {
  t.is(addressKey("203.0.113.7"), "203.0.113.7");
  t.is(addressKey("::ffff:203.0.113.7"), "203.0.113.7");
  t.is(addressKey("::FFFF:203.0.113.7"), "203.0.113.7");
});

test("an IPv6 address is counted by its /64, however it is written", (t) => {
  t.is(addressKey("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  t.is(addressKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
  t.is(addressKey("2001:DB8:1:2::1"), "2001:db8:1:2::/64");
  t.is(addressKey("2001:db8::1"), "2001:db8:0:0::/64");
  t.is(addressKey("fe80::1%eth0"), "fe80:0:0:0::/64", "the zone is left out");
  t.is(addressKey("::1"), "0:0:0:0::/64");
  t.is(addressKey("64:ff9b::1.2.3.4"), "64:ff9b:0:0::/64", "an IPv4 tail takes two groups");
});

test("two addresses of one /64 share a count; the next /64 does not", (t) => {
  t.is(addressKey("2001:db8:1:2::a"), addressKey("2001:db8:1:2:ffff::b"));
  t.not(addressKey("2001:db8:1:2::a"), addressKey("2001:db8:1:3::a"));
});

const minute = 60_000;
const throttle = (extra: Partial<ConstructorParameters<typeof SignInThrottle>[0]> = {}) => new SignInThrottle({ perAccount: 3, perIp: 5, windowMs: 15 * minute, ...extra });

test("an account is locked after its limit of failures, until the window that opened with the first closes", (t) => {
  const th = throttle();
  const start = 1_000_000;
  th.failed("a@x", "198.51.100.1", start);
  th.failed("a@x", "198.51.100.2", start + minute);
  t.is(th.check("a@x", "198.51.100.3", start + minute), undefined, "two of three: not locked");
  th.failed("a@x", "198.51.100.3", start + 2 * minute);
  t.is(th.check("a@x", "198.51.100.4", start + 2 * minute), 13 * minute, "locked until fifteen minutes after the first failure");
  t.is(th.check("a@x", "198.51.100.4", start + 15 * minute), undefined, "open again when the window closes");
});

test("failures while locked never lengthen the lock", (t) => {
  const th = throttle();
  for (let i = 0; i < 3; i++) th.failed("a@x", "198.51.100.1", i);
  const before = th.check("a@x", "198.51.100.9", 10);
  for (let i = 0; i < 20; i++) th.failed("a@x", "198.51.100.1", 10 + i);
  t.is(th.check("a@x", "198.51.100.9", 10), before);
});

test("an address is locked after its limit over any accounts; other addresses are not", (t) => {
  const th = throttle();
  for (let i = 0; i < 5; i++) th.failed(`user${i}@x`, "198.51.100.7", i);
  t.truthy(th.check("fresh@x", "198.51.100.7", 10), "a new account from the same address is refused");
  t.is(th.check("fresh@x", "198.51.100.8", 10), undefined);
});

test("an IPv6 attacker hopping inside one /64 is counted as one address", (t) => {
  const th = throttle();
  for (let i = 0; i < 5; i++) th.failed(`u${i}@x`, `2001:db8:1:2::${i + 1}`, i);
  t.truthy(th.check("v@x", "2001:db8:1:2:abcd::1", 10));
});

test("a place the owner signed in from is not locked by others' failures elsewhere", (t) => {
  const th = throttle();
  th.succeeded("a@x", "198.51.100.1", 0);
  for (let i = 0; i < 3; i++) th.failed("a@x", `203.0.113.${i + 1}`, 10 + i);
  t.truthy(th.check("a@x", "203.0.113.50", 20), "elsewhere: the account is locked");
  t.is(th.check("a@x", "198.51.100.1", 20), undefined, "the owner's usual place is not");
});

test("the owner's own failures at a known place still lock that place", (t) => {
  const th = throttle();
  th.succeeded("a@x", "198.51.100.1", 0);
  for (let i = 0; i < 3; i++) th.failed("a@x", "198.51.100.1", 10 + i);
  t.truthy(th.check("a@x", "198.51.100.1", 20));
});

test("a known place is forgotten after its time", (t) => {
  const th = throttle({ knownAddressMs: 60 * minute });
  th.succeeded("a@x", "198.51.100.1", 0);
  const later = 61 * minute;
  for (let i = 0; i < 3; i++) th.failed("a@x", `203.0.113.${i + 1}`, later + i);
  t.truthy(th.check("a@x", "198.51.100.1", later + 10), "no longer known: the account's lock applies there too");
});

test("a success clears the owner's typos at that place, not the account's count elsewhere", (t) => {
  const th = throttle();
  th.failed("a@x", "198.51.100.1", 0);
  th.failed("a@x", "198.51.100.1", 1);
  th.succeeded("a@x", "198.51.100.1", 2);
  th.failed("a@x", "198.51.100.1", 3);
  t.is(th.check("a@x", "198.51.100.1", 4), undefined, "one typo since the success");
  t.truthy(th.check("a@x", "203.0.113.1", 4), "the account's three failures still count elsewhere");
});

test("a lock answers at least one millisecond", (t) => {
  const th = throttle({ windowMs: 10 });
  for (let i = 0; i < 3; i++) th.failed("a@x", "198.51.100.1", 0);
  t.is(th.check("a@x", "198.51.100.2", 9), 1);
  t.is(th.check("a@x", "198.51.100.2", 10), undefined);
});

test("memory is bounded: past the key limit, the counts that end soonest go first", (t) => {
  const th = throttle({ perAccount: 1, perIp: 1000, maxKeys: 3 });
  th.failed("first@x", "198.51.100.1", 0);
  for (let i = 0; i < 3; i++) th.failed(`later${i}@x`, "198.51.100.1", 100 + i);
  t.is(th.check("first@x", "203.0.113.1", 200), undefined, "the oldest count was dropped");
  t.truthy(th.check("later2@x", "203.0.113.1", 200), "the newest is kept");
});
