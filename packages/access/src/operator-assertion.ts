import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { newId } from "@payments/kit";

/**
 * The signed assertion of who acts, carried by every call made for a person (an operator, later
 * a merchant user) or a service account: an Ed25519 JWT the console (or, in the all-in-one, the
 * local admin key) signs and each service verifies against OPERATOR_ASSERTION_PUBLIC_KEY. The
 * services trust nothing else about the human: not a name in the request, not the caller.
 */
export const OPERATOR_ASSERTION_HEADER = "x-operator-assertion";
export const OPERATOR_ASSERTION_ISSUER = "payments-console";
/** A person's assertion lives 60 s: one per call or a few calls, never stored. */
export const HUMAN_ASSERTION_TTL_SECONDS = 60;
/**
 * A service account token (automation) lives at most this long; it names itself `kind: service`
 * and its one audience is the console, where it is exchanged for a 60-second assertion per call:
 * the services accept nothing that lives longer than a minute.
 */
export const MAX_SERVICE_TOKEN_TTL_SECONDS = 90 * 24 * 3600;
/** The console's own audience: the admin API, and where a service account's token is exchanged. */
export const CONSOLE_ASSERTION_AUDIENCE = "console";
/** The all-in-one's local admin key (PKCS#8 PEM) in its data directory: `pnpm start` writes it, `pnpm cli` on the same machine signs with it. */
export const LOCAL_ADMIN_KEY_FILE = "operator-admin.key";
/**
 * jose, loaded on the first assertion signed or verified: most calls a service answers come from
 * trusted internal callers and never need it, and an idle service stays within its memory line.
 */
let joseModule: Promise<typeof import("jose")> | undefined;
const jose = () => (joseModule ??= import("jose"));

/** Clocks of the signer and the service may disagree by this much. */
const CLOCK_TOLERANCE_SECONDS = 5;

export const OPERATOR_ROLES = ["viewer", "support", "operator", "finance", "admin"] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export function isOperatorRole(value: unknown): value is OperatorRole {
  return typeof value === "string" && (OPERATOR_ROLES as readonly string[]).includes(value);
}

/** Each role may do what the roles before it may, and more (viewer < support < operator < finance < admin). */
export function roleAtLeast(role: OperatorRole, needed: OperatorRole): boolean {
  return OPERATOR_ROLES.indexOf(role) >= OPERATOR_ROLES.indexOf(needed);
}

/**
 * The roles of a merchant's own people (the merchant dashboard). Not a ladder: an owner may do
 * everything, a developer the integration (keys, webhook, IPs, sandbox tools), finance the money
 * (statements, withdrawals, exports), a viewer reads. Each RPC lists the ones it admits.
 */
export const MERCHANT_ROLES = ["owner", "developer", "finance", "viewer"] as const;
export type MerchantRole = (typeof MERCHANT_ROLES)[number];

export function isMerchantRole(value: unknown): value is MerchantRole {
  return typeof value === "string" && (MERCHANT_ROLES as readonly string[]).includes(value);
}

/** A person signed in to the console, or a service account (automation, the all-in-one's local admin). */
export type ActorKind = "human" | "service";

/** One of our operators (or a service account acting as one). */
export interface OperatorIdentity {
  /** Who: the operator's email, or the service account's name. Recorded as the actor. */
  subject: string;
  /** Display name, for pages and logs. */
  name: string;
  role: OperatorRole;
  kind: ActorKind;
  merchantId?: undefined;
}

/** A merchant's own user (the merchant dashboard): every read and write is scoped to `merchantId` by the services. */
export interface MerchantUserIdentity {
  /** The user's email. Recorded as the actor, with the merchant. */
  subject: string;
  name: string;
  role: MerchantRole;
  kind: ActorKind;
  merchantId: string;
}

/** Whoever an assertion names: the type makes every check tell an operator from a merchant's user. */
export type ActorIdentity = OperatorIdentity | MerchantUserIdentity;

export function isMerchantUser(identity: ActorIdentity): identity is MerchantUserIdentity {
  return typeof identity.merchantId === "string";
}

export type AssertionClaims = ActorIdentity & {
  /** The services the assertion is for (`deposit`, `payout`, …): a service refuses any other. */
  audience: string | readonly string[];
  /** Seconds; HUMAN_ASSERTION_TTL_SECONDS when not given. At most MAX_SERVICE_TOKEN_TTL_SECONDS, and only a service account may exceed 60 s. */
  ttlSeconds?: number;
};

/** Why an assertion was refused, for the UNAUTHENTICATED answer (never the token itself). */
export class AssertionError extends Error {}

/**
 * A key given in an environment variable: PEM text (newlines may be written `\n`) or the path
 * of a PEM file. Ed25519 only.
 */
function keyText(value: string): string {
  const text = value.trim();
  if (text.startsWith("-----BEGIN")) return text.replace(/\\n/g, "\n");
  return readFileSync(text, "utf8");
}

export function loadAssertionPublicKey(value: string): KeyObject {
  const key = createPublicKey(keyText(value));
  if (key.asymmetricKeyType !== "ed25519") throw new Error("the operator assertion public key must be an Ed25519 key");
  return key;
}

export function loadAssertionPrivateKey(value: string): KeyObject {
  const key = createPrivateKey(keyText(value));
  if (key.asymmetricKeyType !== "ed25519") throw new Error("the operator assertion private key must be an Ed25519 key");
  return key;
}

/** A new Ed25519 key pair as PEM (PKCS#8 private, SPKI public). */
export function generateAssertionKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

export async function signAssertion(privateKey: KeyObject, claims: AssertionClaims, now: Date = new Date()): Promise<string> {
  const ttl = claims.ttlSeconds ?? HUMAN_ASSERTION_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > MAX_SERVICE_TOKEN_TTL_SECONDS) throw new AssertionError(`ttl must be 1..${MAX_SERVICE_TOKEN_TTL_SECONDS} seconds`);
  if (claims.kind === "human" && ttl > HUMAN_ASSERTION_TTL_SECONDS) throw new AssertionError(`a person's assertion lives at most ${HUMAN_ASSERTION_TTL_SECONDS} s`);
  const issuedAt = Math.floor(now.getTime() / 1000);
  const { SignJWT } = await jose();
  return new SignJWT({ role: claims.role, kind: claims.kind, name: claims.name, ...(claims.merchantId ? { merchant_id: claims.merchantId } : {}) })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
    .setIssuer(OPERATOR_ASSERTION_ISSUER)
    .setSubject(claims.subject)
    .setAudience(typeof claims.audience === "string" ? claims.audience : [...claims.audience])
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttl)
    .setJti(newId("asr"))
    .sign(privateKey);
}

/** The longest assertion id (`jti`) a service records. */
const MAX_JTI_LENGTH = 100;

/**
 * The identity in a valid assertion for `audience`, or AssertionError: a bad signature, another
 * issuer or audience, expired, a person's that lives longer than 60 s, a role that is not one.
 */
export async function verifyAssertion(publicKey: KeyObject, token: string, audience: string, now: Date = new Date()): Promise<ActorIdentity> {
  return (await verifyAssertionWithId(publicKey, token, audience, now)).actor;
}

/**
 * verifyAssertion, with the assertion's id (`jti`, undefined when it names none): a service
 * accepts an assertion for one mutating call only, recording its id with the call's audit row.
 */
export async function verifyAssertionWithId(publicKey: KeyObject, token: string, audience: string, now: Date = new Date()): Promise<{ actor: ActorIdentity; jti: string | undefined }> {
  const { errors: joseErrors, jwtVerify } = await jose();
  let payload;
  try {
    ({ payload } = await jwtVerify(token, publicKey, {
      algorithms: ["EdDSA"],
      issuer: OPERATOR_ASSERTION_ISSUER,
      audience,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: now,
      requiredClaims: ["sub", "iat", "exp"],
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new AssertionError("the operator assertion has expired");
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw new AssertionError(`the operator assertion is not valid here (${err.claim})`);
    throw new AssertionError("the operator assertion is not valid");
  }
  const { sub, role, kind, name, iat, exp, aud, jti, merchant_id: merchantId } = payload as Record<string, unknown>;
  if (jti !== undefined && (typeof jti !== "string" || jti === "" || jti.length > MAX_JTI_LENGTH)) throw new AssertionError("the operator assertion's id (jti) is not one");
  // One assertion, one service: an assertion naming several could be replayed at each of them.
  if (Array.isArray(aud) && aud.length !== 1) throw new AssertionError("the operator assertion names more than one audience");
  if (typeof sub !== "string" || sub === "") throw new AssertionError("the operator assertion names no subject");
  const forMerchant = typeof merchantId === "string" && merchantId !== "";
  if (merchantId !== undefined && !forMerchant) throw new AssertionError("the operator assertion names an empty merchant");
  if (forMerchant ? !isMerchantRole(role) : !isOperatorRole(role)) throw new AssertionError("the operator assertion names no known role");
  if (kind !== "human" && kind !== "service") throw new AssertionError("the operator assertion names no known kind");
  const lifetime = Number(exp) - Number(iat);
  if (kind === "human" && lifetime > HUMAN_ASSERTION_TTL_SECONDS) throw new AssertionError("a person's assertion may live at most 60 s");
  if (lifetime > MAX_SERVICE_TOKEN_TTL_SECONDS) throw new AssertionError("the service token lives too long");
  if (lifetime > HUMAN_ASSERTION_TTL_SECONDS && audience !== CONSOLE_ASSERTION_AUDIENCE) {
    throw new AssertionError("an assertion for a service lives at most 60 s: a service account's token is exchanged at the console for one per call");
  }
  if (Number(iat) > now.getTime() / 1000 + CLOCK_TOLERANCE_SECONDS) throw new AssertionError("the operator assertion was issued in the future");
  const display = typeof name === "string" && name !== "" ? name : sub;
  // One canonical subject: `ALICE@…` is `alice@…`, for the maker check and the audit alike.
  const subject = canonicalSubject(sub);
  const id = typeof jti === "string" ? jti : undefined;
  if (forMerchant) return { actor: { subject, name: display, role: role as MerchantRole, kind, merchantId }, jti: id };
  return { actor: { subject, name: display, role: role as OperatorRole, kind }, jti: id };
}

/**
 * The one spelling of a person's (or service account's) name that every comparison and record
 * uses: trimmed, Unicode NFKC, case-folded. An email differs from another only by its letters.
 */
export function canonicalSubject(subject: string): string {
  return subject.trim().normalize("NFKC").toLowerCase();
}

/**
 * Signs assertions for one identity, one per audience, each reused until 10 s before it
 * expires: what a client (the CLI, the console, a test) attaches to its calls.
 */
export interface AssertionSigner {
  /** `fresh`: one never handed out before (for a call that changes anything: the services accept each such assertion once). */
  assertionFor(audience: string, options?: { fresh?: boolean }): Promise<string>;
}

export function createAssertionSigner(privateKey: KeyObject, identity: ActorIdentity, options: { ttlSeconds?: number; now?: () => Date } = {}): AssertionSigner {
  const now = options.now ?? (() => new Date());
  const ttl = options.ttlSeconds ?? HUMAN_ASSERTION_TTL_SECONDS;
  const cache = new Map<string, { token: string; renewAt: number }>();
  return {
    async assertionFor(audience, options) {
      const at = now().getTime();
      const held = cache.get(audience);
      if (held && held.renewAt > at && !options?.fresh) return held.token;
      const token = await signAssertion(privateKey, { ...identity, audience, ttlSeconds: ttl }, now());
      // A fresh one is used once and never handed out again; the reads keep theirs.
      if (!options?.fresh) cache.set(audience, { token, renewAt: at + Math.max(1, ttl - 10) * 1000 });
      return token;
    },
  };
}

/** A fixed token (a service account's, or one the console handed out) for every audience it names. */
export function fixedAssertion(token: string): AssertionSigner {
  return { assertionFor: () => Promise.resolve(token) };
}

/**
 * The service a proto service belongs to, as services name themselves and as assertions name
 * their audience: `payments.deposit.v1.DepositService` → `deposit`, `payments.bankcatalog.v1…`
 * → `bank-catalog`, `payments.callback.v1…` → `callback-sender`. undefined for one that is no
 * payments service (health, reflection) or is served by every service (payments.operator.v1).
 */
export function audienceOfService(typeName: string): string | undefined {
  const pkg = /^payments\.([a-z]+)\.v1\./.exec(typeName)?.[1];
  switch (pkg) {
    case "bankcatalog":
      return "bank-catalog";
    case "callback":
      return "callback-sender";
    case "deposit":
    case "merchant":
    case "payout":
      return pkg;
    default:
      return undefined;
  }
}
