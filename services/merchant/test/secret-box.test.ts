import test from "ava";
import { randomBytes } from "node:crypto";
import { ConfigError } from "@payments/kit";
import { loadMerchantConfig } from "../src/context.js";
import { createSecretBox, parseMasterKey, SecretBoxError } from "../src/secret-box.js";

const key = randomBytes(32);

test("a sealed secret opens to the same plaintext and does not contain it", (t) => {
  const box = createSecretBox(key);
  const sealed = box.seal("sk_plain-secret", "mer_1");
  t.regex(sealed, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
  t.false(sealed.includes("sk_plain-secret"));
  t.is(box.open(sealed, "mer_1"), "sk_plain-secret");
});

test("sealing the same secret twice gives different values (random IV)", (t) => {
  const box = createSecretBox(key);
  t.not(box.seal("same", "mer_1"), box.seal("same", "mer_1"));
});

test("any altered part of a sealed secret is detected", (t) => {
  const box = createSecretBox(key);
  const sealed = box.seal("sk_plain-secret", "mer_1");
  const parts = sealed.split(".");
  for (const index of [1, 2, 3]) {
    const altered = [...parts];
    const part = altered[index]!;
    const bytes = Buffer.from(part, "base64url");
    bytes[0] = bytes[0]! ^ 0x01;
    altered[index] = bytes.toString("base64url");
    t.throws(() => box.open(altered.join("."), "mer_1"), { instanceOf: SecretBoxError }, `part ${index}`);
  }
  t.throws(() => box.open(sealed.replace(/^v1/, "v2"), "mer_1"), { instanceOf: SecretBoxError });
  t.throws(() => box.open("garbage", "mer_1"), { instanceOf: SecretBoxError });
});

test("a sealed secret does not open under another key or for another merchant", (t) => {
  const sealed = createSecretBox(key).seal("sk_plain-secret", "mer_1");
  t.throws(() => createSecretBox(randomBytes(32)).open(sealed, "mer_1"), { instanceOf: SecretBoxError });
  t.throws(() => createSecretBox(key).open(sealed, "mer_2"), { instanceOf: SecretBoxError });
});

test("the master key is read from 64 hex characters or base64 of 32 bytes", (t) => {
  t.deepEqual(parseMasterKey(key.toString("hex")), key);
  t.deepEqual(parseMasterKey(key.toString("base64")), key);
  t.deepEqual(parseMasterKey(key.toString("base64url")), key);
  t.is(parseMasterKey(randomBytes(16).toString("hex")), undefined);
  t.is(parseMasterKey(randomBytes(31).toString("base64")), undefined);
  t.is(parseMasterKey("not a key at all!"), undefined);
});

test("a missing or malformed MASTER_KEY is a configuration error naming it", (t) => {
  const missing = t.throws(() => loadMerchantConfig({}), { instanceOf: ConfigError });
  t.regex(missing.message, /MASTER_KEY: is required/);
  const short = t.throws(() => loadMerchantConfig({ MASTER_KEY: "abcd" }), { instanceOf: ConfigError });
  t.regex(short.message, /MASTER_KEY: must be 32 bytes/);
  const config = loadMerchantConfig({ MASTER_KEY: key.toString("hex") });
  t.is(config.SECRET_GRACE_PERIOD, 24 * 3600 * 1000, "the grace period defaults to 24 h");
  t.is(loadMerchantConfig({ MASTER_KEY: key.toString("base64"), SECRET_GRACE_PERIOD: "90m" }).SECRET_GRACE_PERIOD, 90 * 60 * 1000);
  t.throws(() => loadMerchantConfig({ MASTER_KEY: key.toString("hex"), SECRET_GRACE_PERIOD: "soon" }), { message: /SECRET_GRACE_PERIOD/ });
});
