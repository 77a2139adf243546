import test from "ava";
import { hashPassword, MIN_PASSWORD_LENGTH, needsRehash, passwordProblem, PASSWORD_PARAMS, verifyPassword } from "../src/identity/password.js";

test("a password hashes with scrypt N=2^15 r=8 p=1, 16-byte salt and 64-byte key written into the hash, and verifies only itself", async (t) => {
  const stored = await hashPassword("correct horse battery staple");
  const [scheme, N, r, p, salt, key] = stored.split("$");
  t.is(scheme, "scrypt");
  t.deepEqual([Number(N), Number(r), Number(p)], [2 ** 15, 8, 1]);
  t.is(Buffer.from(salt ?? "", "base64").length, PASSWORD_PARAMS.saltLength);
  t.is(Buffer.from(key ?? "", "base64").length, PASSWORD_PARAMS.keyLength);
  t.true(await verifyPassword("correct horse battery staple", stored));
  t.false(await verifyPassword("correct horse battery stapl", stored));
  t.false(await verifyPassword("", stored));
});

test("the same password hashes differently each time (a fresh salt)", async (t) => {
  t.not(await hashPassword("correct horse battery staple"), await hashPassword("correct horse battery staple"));
});

test("a hash made with lower parameters still verifies and asks to be rehashed; a malformed or absurd one never verifies", async (t) => {
  const { scryptSync, randomBytes } = await import("node:crypto");
  const salt = randomBytes(16);
  const weak = `scrypt$1024$8$1$${salt.toString("base64")}$${scryptSync("old password here", salt, 64, { N: 1024, r: 8, p: 1 }).toString("base64")}`;
  t.true(await verifyPassword("old password here", weak));
  t.true(needsRehash(weak));
  t.false(needsRehash(await hashPassword("a new password here")));
  t.false(await verifyPassword("x", "scrypt$1024$8$1$short$short"));
  t.false(await verifyPassword("x", `scrypt$${2 ** 30}$8$1$${salt.toString("base64")}$${salt.toString("base64")}${salt.toString("base64")}`));
  t.false(await verifyPassword("x", "bcrypt$whatever"));
});

test(`a new password needs at least ${MIN_PASSWORD_LENGTH} characters`, (t) => {
  t.is(passwordProblem("a".repeat(MIN_PASSWORD_LENGTH - 1)), "too_short");
  t.is(passwordProblem("a".repeat(MIN_PASSWORD_LENGTH)), undefined);
  // Characters, not bytes: twelve Turkish letters are twelve.
  t.is(passwordProblem("ğüşıöçĞÜŞİÖÇ"), undefined);
  t.is(passwordProblem("a".repeat(300)), "too_long");
});
