import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * API secrets at rest. HMAC verification needs the plaintext, so secrets cannot be hashed;
 * they are sealed with AES-256-GCM under the master key instead. A sealed value is one
 * string, `v1.<iv>.<tag>.<ciphertext>` (base64url parts), so a later key can be told apart
 * by its version prefix. The merchant id is bound as associated data: a sealed secret
 * copied onto another merchant's row does not open.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** Throws SecretBoxError when the value was altered, sealed under another key or context. */
  open(sealed: string, context: string): string;
}

export class SecretBoxError extends Error {
  override name = "SecretBoxError";
}

const VERSION = "v1";
const ALGORITHM = "aes-256-gcm";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The master key from its text form: 64 hex characters, or base64 / base64url of 32 bytes. */
export function parseMasterKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, "hex");
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  const key = Buffer.from(trimmed, "base64");
  return key.length === KEY_BYTES ? key : undefined;
}

export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`the master key must be ${KEY_BYTES} bytes, got ${key.length}`);
  const masterKey = Buffer.from(key);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, masterKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv.toString("base64url"), tag.toString("base64url"), ciphertext.toString("base64url")].join(".");
    },
    open(sealed, context) {
      const parts = sealed.split(".");
      if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretBoxError(`unsupported sealed secret format`);
      const [, ivText = "", tagText = "", ciphertextText = ""] = parts;
      if (![ivText, tagText, ciphertextText].every((p) => BASE64URL.test(p))) throw new SecretBoxError("malformed sealed secret");
      const iv = Buffer.from(ivText, "base64url");
      const tag = Buffer.from(tagText, "base64url");
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError("malformed sealed secret");
      try {
        const decipher = createDecipheriv(ALGORITHM, masterKey, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(Buffer.from(ciphertextText, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretBoxError("sealed secret failed authentication (altered, or another key)");
      }
    },
  };
}
