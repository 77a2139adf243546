import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/** Shorter passwords are refused: length is what makes a password hard to guess offline. */
export const MIN_PASSWORD_LENGTH = 12;
/** Longer ones too: scrypt's cost grows with the input, and nobody types 1 000 characters. */
export const MAX_PASSWORD_LENGTH = 256;

/**
 * scrypt's cost: N = 2^15, r = 8, p = 1 (32 MiB and about 50-100 ms per hash on a server core),
 * a 64-byte key and a 16-byte salt. The parameters are written into each hash, so raising them
 * later leaves old hashes verifiable (and `needsRehash` tells when to store a new one).
 */
export const PASSWORD_PARAMS = { N: 2 ** 15, r: 8, p: 1, keyLength: 64, saltLength: 16 } as const;

function scryptAsync(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFKC"), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** 128·N·r bytes are needed; Node's default ceiling (32 MiB) is exactly N=2^15, r=8, so leave room. */
function memoryFor(N: number, r: number): number {
  return 256 * N * r;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): "too_short" | "too_long" | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return "too_short";
  if (length > MAX_PASSWORD_LENGTH) return "too_long";
  return undefined;
}

/** `scrypt$<N>$<r>$<p>$<salt base64>$<key base64>`. */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keyLength, saltLength } = PASSWORD_PARAMS;
  const salt = randomBytes(saltLength);
  const key = await scryptAsync(password, salt, keyLength, { N, r, p, maxmem: memoryFor(N, r) });
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

function parseHash(stored: string): ParsedHash | undefined {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  // Bounds keep a tampered row from making one verification allocate gigabytes.
  if (![N, r, p].every(Number.isSafeInteger) || N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return undefined;
  const salt = Buffer.from(parts[4] ?? "", "base64");
  const key = Buffer.from(parts[5] ?? "", "base64");
  if (salt.length < 16 || key.length < 32) return undefined;
  return { N, r, p, salt, key };
}

/** True when `password` is the one `stored` was made from; the comparison takes the same time whatever differs. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed || [...password].length > MAX_PASSWORD_LENGTH) return false;
  const key = await scryptAsync(password, parsed.salt, parsed.key.length, { N: parsed.N, r: parsed.r, p: parsed.p, maxmem: memoryFor(parsed.N, parsed.r) });
  return timingSafeEqual(key, parsed.key);
}

/** True when `stored` was made with weaker parameters than today's: store a fresh hash at the next sign-in. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  const { N, r, p, keyLength } = PASSWORD_PARAMS;
  return !parsed || parsed.N < N || parsed.r < r || parsed.p < p || parsed.key.length < keyLength;
}

/**
 * A hash of a password nobody has, verified when the account does not exist or has no
 * password yet: the answer then takes as long as for a real account, so timing does not tell
 * which emails have accounts.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(32).toString("base64"));
  return decoy;
}
