import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30 s. */
const PERIOD = 30;
const DIGITS = 6;
const ISSUER = "Payments console";

/** A new random secret (160 bits, RFC 4226's recommendation), base32 as apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app imports (as a QR code, or pasted). */
export function totpUri(secretBase32: string, email: string): string {
  return new TOTP({ issuer: ISSUER, label: email, secret: Secret.fromBase32(secretBase32), digits: DIGITS, period: PERIOD }).toString();
}

/**
 * The 30-second step `code` belongs to, when it is valid at `now` (one step either way, for
 * clocks that drift and codes typed at a step's end), else undefined. The caller keeps the
 * step so the same code is never accepted twice.
 */
export function totpStep(secretBase32: string, code: string, now: Date): number | undefined {
  const token = code.replace(/\s+/g, "");
  if (!/^\d{6}$/.test(token)) return undefined;
  const timestamp = now.getTime();
  const delta = TOTP.validate({ token, secret: Secret.fromBase32(secretBase32), digits: DIGITS, period: PERIOD, timestamp, window: 1 });
  if (delta === null) return undefined;
  return TOTP.counter({ period: PERIOD, timestamp }) + delta;
}

/** The code valid at `now`, for tests and for nothing else. */
export function totpCode(secretBase32: string, now: Date): string {
  return TOTP.generate({ secret: Secret.fromBase32(secretBase32), digits: DIGITS, period: PERIOD, timestamp: now.getTime() });
}

/**
 * Seals and opens TOTP secrets at rest: with a key, AES-256-GCM (`v1.<iv>.<tag>.<ciphertext>`,
 * base64url), so a copy of the database alone does not give anyone the second factor; without
 * one, `plain.<base32>`. Either form opens with the key, so a key can be introduced later.
 */
export interface TotpSealer {
  seal(secretBase32: string): string;
  open(stored: string): string;
}

export function totpSealer(key: Buffer | undefined): TotpSealer {
  return {
    seal(secret) {
      if (!key) return `plain.${secret}`;
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      return `v1.${iv.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${ciphertext.toString("base64url")}`;
    },
    open(stored) {
      if (stored.startsWith("plain.")) return stored.slice("plain.".length);
      const [version, iv, tag, ciphertext] = stored.split(".");
      if (version !== "v1" || !iv || !tag || !ciphertext) throw new Error("unreadable TOTP secret");
      if (!key) throw new Error("a sealed TOTP secret needs CONSOLE_TOTP_KEY");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}
