import test from "ava";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { addressKey, SignInThrottle } from "../src/identity/sign-in-throttle.js";
import { newTotpSecret, totpCode } from "../src/identity/totp.js";
import { Browser, csrfOf, operatorWithPassword, testConsole, type JsonAnswer, type TestConsole } from "./harness.js";

// Sign-in throttling that guessing cannot turn against an account's owner (issue 32): an
// anonymous party hammering an account, from many addresses or from the owner's own, cannot keep
// the owner with password and TOTP out; guessing stays throttled per account and per address.
// The console believes X-Forwarded-For from loopback here, so each test picks its addresses.

const OWNER_IP = "198.51.100.7";

async function lockoutConsole(t: Parameters<typeof testConsole>[0]): Promise<TestConsole> {
  return testConsole(t, { TRUSTED_PROXIES: "loopback" });
}

/** A CLI sign-in from `ip`. */
async function attempt(c: TestConsole, ip: string, body: { email: string; password: string; totp?: string }): Promise<JsonAnswer> {
  const res = await fetch(`${c.url}/api/cli/sessions`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": ip }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

/** An account with a password and TOTP (the secret set as enrolment stores it unsealed); its key for codes. */
async function ownerWithTotp(c: TestConsole, email = "owner@example.com"): Promise<{ email: string; password: string; key: string }> {
  const { password } = await operatorWithPassword(c, { email, role: "admin" });
  const key = newTotpSecret();
  await c.console.context.db("operators").where({ email }).update({ totp_secret: `plain.${key}` });
  return { email, password, key };
}

/** `n` wrong guesses at `email`, each from its own address of a botnet (or from `ip` when given). */
async function hammer(c: TestConsole, email: string, n: number, options: { ip?: string; totp?: boolean; offset?: number } = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const ip = options.ip ?? `203.0.113.${(options.offset ?? 0) + i + 1}`;
    statuses.push((await attempt(c, ip, { email, password: `guess number ${i}`, ...(options.totp ? { totp: String(100000 + i) } : {}) })).status);
  }
  return statuses;
}

/** Counts scrypt rounds (password checks) while `run` runs: node:crypto's scrypt, wrapped where password.ts imports it. */
async function scryptRounds(run: () => Promise<void>): Promise<number> {
  const original = crypto.scrypt;
  let rounds = 0;
  crypto.scrypt = ((...args: Parameters<typeof original>) => {
    rounds += 1;
    return (original as (...a: unknown[]) => void)(...args);
  }) as typeof original;
  syncBuiltinESMExports();
  try {
    await run();
  } finally {
    crypto.scrypt = original;
    syncBuiltinESMExports();
  }
  return rounds;
}

test.serial("a botnet guessing at an account locks guessing out (429 from anywhere, even with the right password and no code), but the owner with password and a current code signs in at once", async (t) => {
  const c = await lockoutConsole(t);
  const owner = await ownerWithTotp(c);
  t.deepEqual(await hammer(c, owner.email, 5), [401, 401, 401, 401, 401]);
  // Locked for the account: a sixth guess from a fresh address, and the owner without a code, are refused.
  t.deepEqual(await hammer(c, owner.email, 3, { offset: 50 }), [429, 429, 429]);
  const noCode = await attempt(c, OWNER_IP, { email: owner.email, password: owner.password });
  t.is(noCode.status, 429);
  t.true(Number(noCode.headers.get("retry-after")) > 800);
  t.regex((noCode.body.error as { message: string }).message, /current authenticator code/);
  // Wrong codes (with or without the password) stay 429 and count.
  t.is((await attempt(c, "203.0.113.99", { email: owner.email, password: owner.password, totp: "000000" })).status, 429);
  // The owner, with the password and a current code: in, without waiting for the lock to end.
  const signedIn = await attempt(c, OWNER_IP, { email: owner.email, password: owner.password, totp: totpCode(owner.key, c.clock.now()) });
  t.is(signedIn.status, 201);
  t.truthy(signedIn.body.token);
  const events = await c.console.context.db("sign_in_events").where({ email: owner.email }).orderBy("id").select<Array<{ event: string; reason: string | null }>>("event", "reason");
  t.deepEqual(
    events.filter((e) => e.event !== "password_set").map((e) => `${e.event}:${e.reason ?? ""}`),
    [...Array<string>(5).fill("sign_in_failed:bad_password"), "sign_in_throttled:locked", "sign_in_throttled:locked", "sign_in_throttled:locked", "sign_in_throttled:locked", "sign_in_throttled:bad_totp", "sign_in:"],
  );
});

test.serial("an attacker at the owner's own address (one NAT) who spent the account's and the address's counts cannot keep the owner with a code out either", async (t) => {
  const c = await lockoutConsole(t);
  const owner = await ownerWithTotp(c);
  // The owner signed in from the office before: the address is known to the account.
  t.is((await attempt(c, OWNER_IP, { email: owner.email, password: owner.password, totp: totpCode(owner.key, c.clock.now()) })).status, 201);
  c.clock.advance(30_000);
  // Someone else behind the same NAT spends the (account, address) count and then the address's.
  const statuses = await hammer(c, owner.email, 25, { ip: OWNER_IP, totp: true });
  t.deepEqual(statuses.slice(0, 5), [401, 401, 401, 401, 401]);
  t.true(statuses.slice(5).every((s) => s === 429));
  for (let i = 0; i < 20; i++) await attempt(c, OWNER_IP, { email: `someone${i}@example.com`, password: "a guess at someone" });
  t.is((await attempt(c, OWNER_IP, { email: owner.email, password: owner.password })).status, 429, "no code: locked like anyone at this address");
  // Within the same minute the owner types the current code: in.
  c.clock.advance(20_000);
  t.is((await attempt(c, OWNER_IP, { email: owner.email, password: owner.password, totp: totpCode(owner.key, c.clock.now()) })).status, 201);
  // The same code is not accepted a second time, even through the lock.
  t.is((await attempt(c, OWNER_IP, { email: owner.email, password: owner.password, totp: totpCode(owner.key, c.clock.now()) })).status, 429);
});

test.serial("through the browser too: the locked-out owner signs in on the page with password and code; the page says a code works now", async (t) => {
  const c = await lockoutConsole(t);
  const owner = await ownerWithTotp(c);
  await hammer(c, owner.email, 6);
  const browser = new Browser(c);
  const from = { "x-forwarded-for": OWNER_IP };
  const page = await browser.get("/sign-in?lang=en", from);
  const post = (form: Record<string, string>) => browser.post("/sign-in?lang=en", { _csrf: csrfOf(page.html), ...form }, from);
  const refused = await post({ email: owner.email, password: owner.password });
  t.is(refused.status, 429);
  t.regex(refused.html, /or now with your password and a current code from your authenticator app/);
  t.is((await post({ email: owner.email, password: owner.password, totp: totpCode(owner.key, c.clock.now()) })).status, 303);
});

test.serial("while locked, attempts that cannot succeed cost no scrypt round: no code, an unknown email, a wrong code", async (t) => {
  const c = await lockoutConsole(t);
  const owner = await ownerWithTotp(c);
  await hammer(c, owner.email, 5);
  await hammer(c, "nobody@example.com", 5, { offset: 100 });
  const rounds = await scryptRounds(async () => {
    for (let i = 0; i < 10; i++) {
      t.is((await attempt(c, `192.0.2.${i + 1}`, { email: owner.email, password: `guess ${i}` })).status, 429);
      t.is((await attempt(c, `192.0.2.${i + 1}`, { email: owner.email, password: `guess ${i}`, totp: "123456" === totpCode(owner.key, c.clock.now()) ? "654321" : "123456" })).status, 429);
      t.is((await attempt(c, `192.0.2.${i + 1}`, { email: "nobody@example.com", password: `guess ${i}`, totp: "123456" })).status, 429);
    }
  });
  t.is(rounds, 0);
  // A valid code makes the password worth checking: one round, and a wrong password is the same 429.
  const one = await scryptRounds(async () => {
    t.is((await attempt(c, "192.0.2.200", { email: owner.email, password: "not the password", totp: totpCode(owner.key, c.clock.now()) })).status, 429);
  });
  t.is(one, 1);
});

test.serial("guessing stays throttled per account (from many addresses) and per address (over many accounts); both end with the window", async (t) => {
  const c = await lockoutConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "plain@example.com", role: "viewer" });
  // Per account: 5 failures from 5 addresses lock it for a sixth address, right password or not.
  await hammer(c, email, 5);
  t.is((await attempt(c, "192.0.2.77", { email, password })).status, 429);
  // Per address: 20 failures over other accounts lock that address for every account.
  for (let i = 0; i < 20; i++) t.is((await attempt(c, "192.0.2.88", { email: `x${i}@example.com`, password: "a guess" })).status, 401);
  const other = await operatorWithPassword(c, { email: "other@example.com", role: "viewer" });
  t.is((await attempt(c, "192.0.2.88", other)).status, 429);
  t.is((await attempt(c, "192.0.2.89", other)).status, 201, "another address is not locked");
  // Counting on while locked does not lengthen the lock: after the 15-minute window both open.
  c.clock.advance(15 * 60_000);
  t.is((await attempt(c, "192.0.2.77", { email, password })).status, 201);
  t.is((await attempt(c, "192.0.2.88", other)).status, 201);
});

test.serial("an account without TOTP: attackers elsewhere cannot lock its owner out of an address it signed in from; a new address waits for the window", async (t) => {
  const c = await lockoutConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "plain@example.com", role: "viewer" });
  t.is((await attempt(c, OWNER_IP, { email, password })).status, 201);
  await hammer(c, email, 30);
  t.is((await attempt(c, OWNER_IP, { email, password })).status, 201, "the owner's known address");
  t.is((await attempt(c, "192.0.2.50", { email, password })).status, 429, "anywhere else: the account is locked");
  // At the known address, guessing is still counted per (account, address).
  await hammer(c, email, 5, { ip: OWNER_IP });
  t.is((await attempt(c, OWNER_IP, { email, password })).status, 429);
});

test("the throttle on its own: fixed windows, a lock that counting never lengthens, known addresses, IPv6 counted by /64", (t) => {
  const throttle = new SignInThrottle({ perAccount: 2, perIp: 3, windowMs: 60_000 });
  throttle.failed("a", "192.0.2.1", 0);
  t.is(throttle.check("a", "192.0.2.9", 1000), undefined);
  throttle.failed("a", "192.0.2.2", 1000);
  t.is(throttle.check("a", "192.0.2.9", 2000), 58_000);
  throttle.failed("a", "192.0.2.9", 59_000);
  t.is(throttle.check("a", "192.0.2.9", 59_000), 1000, "a failure while locked does not move the end");
  t.is(throttle.check("a", "192.0.2.9", 60_000), undefined);
  throttle.succeeded("b", "2001:db8:1:2:aaaa::1", 0);
  throttle.failed("b", "192.0.2.3", 0);
  throttle.failed("b", "192.0.2.4", 0);
  t.is(throttle.check("b", "2001:db8:1:2:ffff::9", 10), undefined, "the /64 the account signed in from");
  t.truthy(throttle.check("b", "2001:db8:1:3::1", 10));
  const keys: Array<[string, string]> = [
    ["2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:0:0:0:1", "2001:db8:1:2::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["192.0.2.1", "192.0.2.1"],
  ];
  for (const [address, key] of keys) t.is(addressKey(address), key, address);
  const small = new SignInThrottle({ perAccount: 1, perIp: 100, windowMs: 60_000, maxKeys: 3 });
  for (const who of ["a", "b", "c", "d"]) small.failed(who, "192.0.2.1", 0);
  t.is(small.check("a", "192.0.2.5", 1), undefined, "past maxKeys the soonest to expire is forgotten first");
  t.truthy(small.check("d", "192.0.2.5", 1));
});
