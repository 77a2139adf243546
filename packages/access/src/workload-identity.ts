import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, timingSafeEqual, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { newId, type Clock } from "@payments/kit";

/**
 * Which program calls: every deployable (and every tool that calls the services) has a workload
 * identity of its own, a SPIFFE ID such as `spiffe://payments.local/gateway`, and proves it on
 * every internal call with a short-lived signed workload assertion (a JWT-SVID-shaped token:
 * `sub` = the SPIFFE ID, `aud` = the one service called, at most 60 s, EdDSA) signed with that
 * workload's own Ed25519 key. Each service verifies it against the trust bundle, which binds
 * each public key to one SPIFFE ID. README, "Workload identities", says why this and not mTLS
 * (and how mTLS stays open).
 *
 * In the all-in-one, calls between the parts of one process never touch the network: they carry
 * a local identity instead (see `localIdentityHeader`), which no caller outside the process can
 * make.
 */
export const WORKLOAD_HEADER = "x-workload-identity";
export const DEFAULT_TRUST_DOMAIN = "payments.local";
/** A workload assertion lives 60 s at most; signers reuse one per audience until 10 s before it ends. */
export const WORKLOAD_TOKEN_TTL_SECONDS = 60;
const RENEW_BEFORE_MS = 10_000;
/** Clocks of the caller and the service may disagree by this much. */
const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * The workloads the access tables can name. A bank integration may have a path of its own
 * under its name (`bank-integration/garanti`): a rule naming `bank-integration` admits it.
 */
export const WORKLOAD_NAMES = [
  "gateway",
  "console",
  "merchant-dashboard",
  "merchant",
  "bank-catalog",
  "deposit",
  "payout",
  "callback-sender",
  "bank-integration",
  "cli",
  "bench",
  "chaos",
] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];

/** The workloads that carry a person's assertion (operators, merchant users); any other that sends one is refused. */
export const OPERATOR_CARRIERS: readonly WorkloadName[] = ["console", "cli", "bench", "chaos"];
export const MERCHANT_USER_CARRIERS: readonly WorkloadName[] = ["console", "merchant-dashboard"];

/** Scopes of a merchant's API key: what the gateway may do with it. */
export const API_KEY_SCOPES = ["read", "deposits", "withdrawals"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === "string" && (API_KEY_SCOPES as readonly string[]).includes(value);
}

/**
 * What the gateway verified of a merchant's request, carried signed in its own workload
 * assertion: only the gateway speaks for a merchant, and the services pin the call to it.
 */
export interface MerchantVoice {
  merchantId: string;
  /** The API key the request was signed with. */
  keyId: string;
  scopes: readonly ApiKeyScope[];
  /** The owner marked the key trusted for automatic payouts: no approval threshold for its withdrawals. */
  trusted: boolean;
}

/** Who a verified call comes from. */
export interface WorkloadIdentity {
  /** `spiffe://payments.local/gateway` */
  id: string;
  trustDomain: string;
  /** The path: `gateway`, `bank-integration/garanti`. */
  path: string;
  /** The first segment of the path, when it is a workload the tables know. */
  name: WorkloadName | undefined;
  /** Set when the gateway speaks for a merchant. */
  merchant?: MerchantVoice;
  /** How it was proven: a signed assertion (its key id), or a call inside this process. */
  proof: { kind: "token"; keyId: string } | { kind: "local" };
}

/** Why a workload identity was refused, for the UNAUTHENTICATED answer (never the token itself). */
export class WorkloadIdentityError extends Error {}

const SPIFFE = /^spiffe:\/\/([a-z0-9.-]+)\/([a-z0-9._-]+(?:\/[a-z0-9._-]+)*)$/;

export function parseSpiffeId(id: string): { trustDomain: string; path: string } | undefined {
  const match = SPIFFE.exec(id);
  return match ? { trustDomain: match[1]!, path: match[2]! } : undefined;
}

export function spiffeId(trustDomain: string, path: string): string {
  const id = `spiffe://${trustDomain}/${path}`;
  if (!parseSpiffeId(id)) throw new Error(`not a SPIFFE ID: ${id}`);
  return id;
}

export function workloadNameOf(path: string): WorkloadName | undefined {
  const first = path.split("/")[0];
  return (WORKLOAD_NAMES as readonly string[]).includes(first ?? "") ? (first as WorkloadName) : undefined;
}

/** Whether `identity` is one of `names` (a bank integration's own path counts as `bank-integration`). */
export function isWorkload(identity: Pick<WorkloadIdentity, "name">, names: readonly WorkloadName[] | undefined): boolean {
  return identity.name !== undefined && names !== undefined && names.includes(identity.name);
}

function pemText(value: string): string {
  const text = value.trim();
  if (text.startsWith("-----BEGIN")) return text.replace(/\\n/g, "\n");
  return readFileSync(text, "utf8");
}

/** A workload's private key: PEM text (newlines may be written `\n`) or a PEM file's path. Ed25519 only. */
export function loadWorkloadKey(value: string): KeyObject {
  const key = createPrivateKey(pemText(value));
  if (key.asymmetricKeyType !== "ed25519") throw new Error("a workload key must be an Ed25519 key");
  return key;
}

export function generateWorkloadKey(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), publicKey };
}

let joseModule: Promise<typeof import("jose")> | undefined;
/** jose, loaded on the first assertion signed or verified (an idle service stays within its memory line). */
const jose = () => (joseModule ??= import("jose"));

/** The key id a bundle and a token name a public key by: its RFC 7638 JWK thumbprint. */
export function keyIdOf(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: "jwk" }) as { crv?: string; kty?: string; x?: string };
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.x) throw new Error("a workload key must be an Ed25519 key");
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${jwk.x}"}`).digest("base64url");
}

/**
 * The trust bundle: which public key speaks for which workload. A JWKS whose keys carry the
 * SPIFFE ID they belong to (`spiffe_id`); several keys may name one workload (a rotation).
 * WORKLOAD_TRUST_BUNDLE is the JSON itself or the path of a file holding it.
 */
export interface TrustBundleJson {
  keys: Array<{ kty: "OKP"; crv: "Ed25519"; x: string; kid: string; spiffe_id: string; use?: string }>;
}

export interface BundleKey {
  keyId: string;
  spiffeId: string;
  publicKey: KeyObject;
}

export class TrustBundle {
  private constructor(private readonly byKeyId: ReadonlyMap<string, BundleKey>) {}

  static of(keys: ReadonlyArray<{ spiffeId: string; publicKey: KeyObject }>): TrustBundle {
    const map = new Map<string, BundleKey>();
    for (const { spiffeId: id, publicKey } of keys) {
      if (!parseSpiffeId(id)) throw new Error(`not a SPIFFE ID: ${id}`);
      const keyId = keyIdOf(publicKey);
      map.set(keyId, { keyId, spiffeId: id, publicKey });
    }
    return new TrustBundle(map);
  }

  /** WORKLOAD_TRUST_BUNDLE: JSON text or a file's path. Throws naming what is wrong. */
  static load(value: string): TrustBundle {
    const text = value.trim().startsWith("{") ? value : readFileSync(value.trim(), "utf8");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error("the trust bundle is not JSON");
    }
    const keys = (json as { keys?: unknown }).keys;
    if (!Array.isArray(keys)) throw new Error('the trust bundle has no "keys" array (a JWKS)');
    const map = new Map<string, BundleKey>();
    for (const [i, jwk] of keys.entries()) {
      const entry = jwk as Partial<TrustBundleJson["keys"][number]>;
      if (entry.kty !== "OKP" || entry.crv !== "Ed25519" || typeof entry.x !== "string") throw new Error(`trust bundle key ${i}: not an Ed25519 public key (kty OKP, crv Ed25519, x)`);
      if (typeof entry.spiffe_id !== "string" || !parseSpiffeId(entry.spiffe_id)) throw new Error(`trust bundle key ${i}: spiffe_id must be a SPIFFE ID (spiffe://<trust domain>/<workload>)`);
      let publicKey: KeyObject;
      try {
        publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: entry.x }, format: "jwk" });
      } catch {
        throw new Error(`trust bundle key ${i}: x is not an Ed25519 public key`);
      }
      const keyId = keyIdOf(publicKey);
      if (entry.kid !== undefined && entry.kid !== keyId) throw new Error(`trust bundle key ${i}: kid ${entry.kid} is not the key's thumbprint (${keyId})`);
      map.set(keyId, { keyId, spiffeId: entry.spiffe_id, publicKey });
    }
    return new TrustBundle(map);
  }

  key(keyId: string): BundleKey | undefined {
    return this.byKeyId.get(keyId);
  }

  get size(): number {
    return this.byKeyId.size;
  }

  /** This bundle with more keys (a rotation's new key beside the old). */
  with(keys: ReadonlyArray<{ spiffeId: string; publicKey: KeyObject }>): TrustBundle {
    const added = TrustBundle.of(keys);
    return new TrustBundle(new Map([...this.byKeyId, ...added.byKeyId]));
  }

  /** The bundle as WORKLOAD_TRUST_BUNDLE's JSON. */
  toJson(): TrustBundleJson {
    return {
      keys: [...this.byKeyId.values()].map((entry) => {
        const jwk = entry.publicKey.export({ format: "jwk" }) as { x: string };
        return { kty: "OKP", crv: "Ed25519", x: jwk.x, kid: entry.keyId, spiffe_id: entry.spiffeId, use: "sig" };
      }),
    };
  }
}

/** Signs this workload's assertions: one per audience (and merchant voice), reused until 10 s before it ends. */
export interface WorkloadSigner {
  readonly id: string;
  tokenFor(audience: string, merchant?: MerchantVoice): Promise<string>;
}

const MAX_CACHED_TOKENS = 10_000;

export function createWorkloadSigner(id: string, privateKey: KeyObject, clock: Clock): WorkloadSigner {
  if (!parseSpiffeId(id)) throw new Error(`not a SPIFFE ID: ${id}`);
  const keyId = keyIdOf(createPublicKey(privateKey));
  const cache = new Map<string, { token: string; renewAt: number }>();
  return {
    id,
    async tokenFor(audience, merchant) {
      const now = clock.now().getTime();
      const cacheKey = merchant ? `${audience}|${merchant.merchantId}|${merchant.keyId}|${merchant.scopes.join(",")}|${merchant.trusted ? 1 : 0}` : audience;
      const held = cache.get(cacheKey);
      if (held && held.renewAt > now) return held.token;
      const { SignJWT } = await jose();
      const issuedAt = Math.floor(now / 1000);
      const claims = merchant ? { merchant: { id: merchant.merchantId, key: merchant.keyId, scopes: [...merchant.scopes], trusted: merchant.trusted } } : {};
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: keyId })
        .setIssuer(id)
        .setSubject(id)
        .setAudience(audience)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + WORKLOAD_TOKEN_TTL_SECONDS)
        .setJti(newId("wit"))
        .sign(privateKey);
      if (cache.size >= MAX_CACHED_TOKENS) cache.delete(cache.keys().next().value!);
      cache.set(cacheKey, { token, renewAt: now + (WORKLOAD_TOKEN_TTL_SECONDS * 1000 - RENEW_BEFORE_MS) });
      return token;
    },
  };
}

/** A process's own secret: the proof of a call made inside it (the all-in-one's parts calling each other). */
export interface LocalIdentities {
  /** The header value an in-process call of `id` carries (the gateway's with the merchant it speaks for). */
  headerFor(id: string, merchant?: MerchantVoice): string;
  /** The SPIFFE ID (and merchant voice) of a header value made by headerFor in this process, else undefined. */
  verify(value: string): { id: string; merchant?: MerchantVoice } | undefined;
}

const LOCAL_PREFIX = "local ";

/**
 * In-process identities: the header names the caller and carries a random secret of this process
 * that never leaves it (in-process calls go through no socket), so nothing outside can make one.
 */
export function createLocalIdentities(): LocalIdentities {
  const secret = randomBytes(32).toString("base64url");
  const expected = Buffer.from(secret);
  return {
    headerFor(id, merchant) {
      const voice = merchant ? ` ${Buffer.from(JSON.stringify({ id: merchant.merchantId, key: merchant.keyId, scopes: merchant.scopes, trusted: merchant.trusted })).toString("base64url")}` : "";
      return `${LOCAL_PREFIX}${secret} ${id}${voice}`;
    },
    verify(value) {
      if (!value.startsWith(LOCAL_PREFIX)) return undefined;
      const [given, id, voice, extra] = value.slice(LOCAL_PREFIX.length).split(" ");
      if (given === undefined || id === undefined || extra !== undefined) return undefined;
      const bytes = Buffer.from(given);
      if (bytes.length !== expected.length || !timingSafeEqual(bytes, expected)) return undefined;
      if (voice === undefined) return { id };
      let claim: unknown;
      try {
        claim = JSON.parse(Buffer.from(voice, "base64url").toString("utf8"));
      } catch {
        return undefined;
      }
      const merchant = merchantVoiceOf(claim);
      return merchant ? { id, merchant } : { id };
    },
  };
}

export interface WorkloadVerifierOptions {
  bundle: TrustBundle | undefined;
  trustDomain: string;
  clock: Clock;
  local?: LocalIdentities;
}

const MAX_VERIFIED = 20_000;

/**
 * Verifies workload assertions for the services of one process. A verified token is kept until
 * it expires (a caller reuses one per audience for most of its minute), so after the first call
 * a caller's identity costs a map lookup, not a signature check.
 */
export class WorkloadVerifier {
  private readonly verified = new Map<string, { identity: WorkloadIdentity; audience: string; expiresAt: number }>();

  constructor(private readonly options: WorkloadVerifierOptions) {}

  get trustDomain(): string {
    return this.options.trustDomain;
  }

  /** The identity `value` (the header) proves for a call to `audience`, or WorkloadIdentityError. */
  async verify(value: string, audience: string): Promise<WorkloadIdentity> {
    const now = this.options.clock.now().getTime();
    const held = this.verified.get(value);
    if (held && held.audience === audience && held.expiresAt > now) return held.identity;
    const local = this.options.local?.verify(value);
    if (local !== undefined) {
      const identity = this.identityOf(local.id, { kind: "local" }, local.merchant);
      if (local.merchant && identity.name !== "gateway") throw new WorkloadIdentityError("only the gateway speaks for a merchant");
      return identity;
    }
    const { identity, expiresAt } = await this.verifyToken(value, audience, now);
    if (this.verified.size >= MAX_VERIFIED) {
      for (const [token, entry] of this.verified) if (entry.expiresAt <= now) this.verified.delete(token);
      if (this.verified.size >= MAX_VERIFIED) this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(value, { identity, audience, expiresAt });
    return identity;
  }

  private identityOf(id: string, proof: WorkloadIdentity["proof"], merchant: MerchantVoice | undefined): WorkloadIdentity {
    const parsed = parseSpiffeId(id);
    if (!parsed) throw new WorkloadIdentityError("the workload identity is not a SPIFFE ID");
    if (parsed.trustDomain !== this.options.trustDomain) throw new WorkloadIdentityError(`the workload identity is of another trust domain (${parsed.trustDomain})`);
    return { id, trustDomain: parsed.trustDomain, path: parsed.path, name: workloadNameOf(parsed.path), proof, ...(merchant ? { merchant } : {}) };
  }

  private async verifyToken(token: string, audience: string, now: number): Promise<{ identity: WorkloadIdentity; expiresAt: number }> {
    const bundle = this.options.bundle;
    if (!bundle) throw new WorkloadIdentityError("this service has no WORKLOAD_TRUST_BUNDLE: it accepts no workload assertion");
    const { decodeProtectedHeader, errors, jwtVerify } = await jose();
    let keyId: unknown;
    try {
      keyId = decodeProtectedHeader(token).kid;
    } catch {
      throw new WorkloadIdentityError("the workload assertion is not a JWT");
    }
    const key = typeof keyId === "string" ? bundle.key(keyId) : undefined;
    if (!key) throw new WorkloadIdentityError("the workload assertion is signed with a key the trust bundle does not hold");
    let payload;
    try {
      ({ payload } = await jwtVerify(token, key.publicKey, {
        algorithms: ["EdDSA"],
        issuer: key.spiffeId,
        subject: key.spiffeId,
        audience,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(now),
        requiredClaims: ["iat", "exp", "jti"],
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new WorkloadIdentityError("the workload assertion has expired");
      if (err instanceof errors.JWTClaimValidationFailed) throw new WorkloadIdentityError(`the workload assertion is not valid here (${err.claim})`);
      throw new WorkloadIdentityError("the workload assertion is not valid");
    }
    if (typeof payload.aud !== "string" && !(Array.isArray(payload.aud) && payload.aud.length === 1)) throw new WorkloadIdentityError("a workload assertion names exactly one audience");
    const lifetime = Number(payload.exp) - Number(payload.iat);
    if (!(lifetime > 0 && lifetime <= WORKLOAD_TOKEN_TTL_SECONDS)) throw new WorkloadIdentityError(`a workload assertion lives at most ${WORKLOAD_TOKEN_TTL_SECONDS} s`);
    if (Number(payload.iat) > now / 1000 + CLOCK_TOLERANCE_SECONDS) throw new WorkloadIdentityError("the workload assertion was issued in the future");
    const merchant = merchantVoiceOf(payload.merchant);
    const identity = this.identityOf(key.spiffeId, { kind: "token", keyId: key.keyId }, merchant);
    // Only the gateway speaks for a merchant: a voice in anyone else's assertion is refused, not ignored.
    if (merchant && identity.name !== "gateway") throw new WorkloadIdentityError("only the gateway speaks for a merchant");
    return { identity, expiresAt: Number(payload.exp) * 1000 };
  }
}

function merchantVoiceOf(claim: unknown): MerchantVoice | undefined {
  if (claim === undefined) return undefined;
  const c = claim as { id?: unknown; key?: unknown; scopes?: unknown; trusted?: unknown };
  if (typeof c.id !== "string" || c.id === "" || typeof c.key !== "string" || c.key === "" || !Array.isArray(c.scopes) || !c.scopes.every(isApiKeyScope)) {
    throw new WorkloadIdentityError("the workload assertion's merchant claim is malformed");
  }
  return { merchantId: c.id, keyId: c.key, scopes: c.scopes, trusted: c.trusted === true };
}
