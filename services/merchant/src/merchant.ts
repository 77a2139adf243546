import { hasUnsafeCharacters } from "@payments/kit";
import ipaddr from "ipaddr.js";
import { z } from "zod";

/** The outcome of a rule applied to raw input: the normalised value, or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const accept = <T>(value: T): Checked<T> => ({ ok: true, value });
const refuse = (message: string): Checked<never> => ({ ok: false, message });

export const NAME_MAX_LENGTH = 200;
/** What the checkout page has room for beside the amount; a longer name is a company's full legal title, which `name` holds. */
export const DISPLAY_NAME_MAX_LENGTH = 100;
export const ALLOWED_IPS_MAX = 100;
export const CALLBACK_URL_MAX_LENGTH = 2048;
/** Above this a limit is a typo, not a policy; it also keeps the value inside a signed INT column. */
export const RATE_LIMIT_MAX = 1_000_000;
/** A rotated-out secret that keeps working for longer than this defeats the rotation. */
export const GRACE_PERIOD_MAX_SECONDS = 30 * 24 * 3600;

export type MerchantStatusName = "active" | "disabled";

/** What a MerchantChanged event says changed. */
export type MerchantChange =
  | "created"
  | "secret_rotated"
  | "webhook_secret_rotated"
  | "allowed_ips"
  | "callback_url"
  | "status"
  | "sandbox"
  | "rate_limit"
  | "payment_rules"
  | "display_name"
  | "secret_revoked"
  | "withdrawal_approval"
  | "api_key_created"
  | "api_key_revoked"
  | "api_key_trusted";

/**
 * The paid-amount rules (issue 14): what the deposit service does with a transfer that pays
 * less (`underpayment`) or more (`overpayment`) than its deposit asked, or pays a deposit that
 * has expired (`latePayment`). `review` holds the money for an operator, `complete` completes
 * the deposit with what arrived, `return` sends it back. Stored by name, one column each.
 */
export const UNDERPAYMENT_RULES = ["review", "complete"] as const;
export const OVERPAYMENT_RULES = ["complete", "review"] as const;
export const LATE_PAYMENT_RULES = ["review", "complete", "return"] as const;
export type UnderpaymentRuleName = (typeof UNDERPAYMENT_RULES)[number];
export type OverpaymentRuleName = (typeof OVERPAYMENT_RULES)[number];
export type LatePaymentRuleName = (typeof LATE_PAYMENT_RULES)[number];

export interface PaymentRules {
  underpayment: UnderpaymentRuleName;
  overpayment: OverpaymentRuleName;
  latePayment: LatePaymentRuleName;
}

/** What a merchant has until an operator decides otherwise (also the columns' defaults). */
export const DEFAULT_PAYMENT_RULES: Readonly<PaymentRules> = { underpayment: "review", overpayment: "complete", latePayment: "review" };

/**
 * A stored rule by name. A value the service does not know (written by hand, or by a newer
 * version) reads as `review`, which only ever holds money for an operator, never moves it.
 */
export function readRule<T extends string>(allowed: readonly T[], stored: string): T | "review" {
  return (allowed as readonly string[]).includes(stored) ? (stored as T) : "review";
}

export function normaliseName(raw: string): Checked<string> {
  const name = raw.trim();
  if (name.length < 1 || name.length > NAME_MAX_LENGTH) return refuse(`must be 1 to ${NAME_MAX_LENGTH} characters after trimming`);
  if (hasUnsafeCharacters(name)) return refuse("must not contain control characters or bidirectional overrides");
  return accept(name);
}

/**
 * The name a merchant's customers see on the checkout page: the kit's text rules (trimmed,
 * no control or bidirectional characters, which could make the page name someone else) at
 * 1..100 characters. Empty after trimming means "none": the merchant's name is shown.
 */
export function normaliseDisplayName(raw: string): Checked<string | null> {
  const displayName = raw.trim();
  if (displayName === "") return accept(null);
  if (displayName.length > DISPLAY_NAME_MAX_LENGTH) return refuse(`must be at most ${DISPLAY_NAME_MAX_LENGTH} characters after trimming (empty: the merchant's name)`);
  if (hasUnsafeCharacters(displayName)) return refuse("must not contain control characters or bidirectional overrides");
  return accept(displayName);
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * ipaddr.js also accepts the legacy IPv4 forms ("10.1", "0x0a.0.0.1", "167772161"), which a
 * human writing an allow-list never means; only dotted quads are taken.
 */
function parseAddress(text: string): Address | undefined {
  if (text.includes("%")) return undefined; // zone ids only mean something on the host that wrote them
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(":") && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
}

function parsePrefix(text: string, max: number): number | undefined {
  if (!/^\d{1,3}$/.test(text)) return undefined;
  const prefix = Number(text);
  return prefix <= max ? prefix : undefined;
}

function networkAddress(address: Address, prefix: number): Address {
  const bytes = address.toByteArray();
  const masked = bytes.map((byte, i) => {
    const bitsHere = Math.max(0, Math.min(8, prefix - i * 8));
    return byte & ((0xff << (8 - bitsHere)) & 0xff);
  });
  return ipaddr.fromByteArray(masked);
}

function format(address: Address): string {
  return address.kind() === "ipv6" ? (address as ipaddr.IPv6).toRFC5952String() : address.toString();
}

/**
 * One allow-list entry in its canonical form: IPv4 dotted quad or RFC 5952 IPv6, a CIDR
 * reduced to its network address, a full-length prefix written as the bare address, and
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) written as the IPv4 it is, since that is how the
 * gateway sees such a caller.
 */
export function normaliseIpEntry(raw: string): Checked<string> {
  const text = raw.trim();
  const slash = text.indexOf("/");
  let address = parseAddress(slash === -1 ? text : text.slice(0, slash));
  if (!address) return refuse(`"${raw}" is not an IP address or CIDR range`);
  let prefix = address.kind() === "ipv4" ? 32 : 128;
  if (slash !== -1) {
    const given = parsePrefix(text.slice(slash + 1), prefix);
    if (given === undefined) return refuse(`"${raw}" has an invalid prefix length (0 to ${prefix} for ${address.kind() === "ipv4" ? "IPv4" : "IPv6"})`);
    prefix = given;
  }
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    address = (address as ipaddr.IPv6).toIPv4Address();
    prefix -= 96;
  }
  // "Empty list: withdrawals refused" would mean nothing if one entry could admit everyone.
  if (prefix === 0) return refuse(`"${raw}" admits every address; list the merchant's own addresses or ranges`);
  const full = address.kind() === "ipv4" ? 32 : 128;
  const network = networkAddress(address, prefix);
  return accept(prefix === full ? format(network) : `${format(network)}/${prefix}`);
}

/** The whole allow-list: every entry valid, normalised, duplicates dropped (first kept), at most 100. */
export function normaliseAllowedIps(raw: readonly string[]): Checked<string[]> {
  const seen = new Set<string>();
  for (const entry of raw) {
    const checked = normaliseIpEntry(entry);
    if (!checked.ok) return checked;
    seen.add(checked.value);
  }
  if (seen.size > ALLOWED_IPS_MAX) return refuse(`may hold at most ${ALLOWED_IPS_MAX} entries (got ${seen.size})`);
  return accept([...seen]);
}

/** True when the caller's address is covered by one of the (normalised) allow-list entries. */
export function ipAllowed(allowedIps: readonly string[], caller: string): boolean {
  let address: Address;
  try {
    address = ipaddr.process(caller); // also unwraps IPv4-mapped IPv6
  } catch {
    return false;
  }
  return allowedIps.some((entry) => {
    try {
      const range = entry.includes("/") ? ipaddr.parseCIDR(entry) : ([ipaddr.parse(entry), address.kind() === "ipv4" ? 32 : 128] as const);
      return range[0].kind() === address.kind() && address.match(range[0], range[1]);
    } catch {
      return false;
    }
  });
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Callbacks carry signed transaction data, so they go over https; plain http is only for a
 * merchant developing on their own machine. Empty means "no callback URL".
 */
export function normaliseCallbackUrl(raw: string): Checked<string | null> {
  const text = raw.trim();
  if (text === "") return accept(null);
  if (text.length > CALLBACK_URL_MAX_LENGTH) return refuse(`must be at most ${CALLBACK_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("is not an absolute URL");
  }
  if (url.protocol === "http:") {
    if (!LOCAL_HOSTS.has(url.hostname)) return refuse("must use https (http only for localhost, 127.0.0.1 or [::1])");
  } else if (url.protocol !== "https:") {
    return refuse("must use https");
  }
  if (url.hostname === "") return refuse("needs a host");
  if (url.username !== "" || url.password !== "") return refuse("must not contain credentials");
  if (url.hash !== "") return refuse("must not contain a fragment");
  const href = url.toString();
  if (href.length > CALLBACK_URL_MAX_LENGTH) return refuse(`must be at most ${CALLBACK_URL_MAX_LENGTH} characters`);
  return accept(href);
}

export interface RateLimit {
  /** null: the gateway default. 0: no limit. */
  perSecond: number | null;
  /** null: the gateway default. */
  burst: number | null;
}

/** A burst smaller than the rate could never be reached, so it is refused rather than silently raised. */
export function checkRateLimit(
  perSecond: number | undefined,
  burst: number | undefined,
): { ok: true; value: RateLimit } | { ok: false; message: string; field: "perSecond" | "burst" } {
  const inRange = (n: number) => Number.isInteger(n) && n >= 0 && n <= RATE_LIMIT_MAX;
  if (perSecond !== undefined && !inRange(perSecond)) return { ok: false, message: `must be 0 to ${RATE_LIMIT_MAX}`, field: "perSecond" };
  if (burst !== undefined && !inRange(burst)) return { ok: false, message: `must be 0 to ${RATE_LIMIT_MAX}`, field: "burst" };
  if (perSecond !== undefined && burst !== undefined && burst < perSecond) {
    return { ok: false, message: `must be at least the rate per second (${perSecond})`, field: "burst" };
  }
  return { ok: true, value: { perSecond: perSecond ?? null, burst: burst ?? null } };
}

export interface SecretLifetime {
  /** Epoch ms; null while the secret is current. */
  expiresAt: number | null;
}

/** A secret verifies signatures until (not at) its expiry; the current one has none. */
export function secretValidAt(secret: SecretLifetime, now: number): boolean {
  return secret.expiresAt === null || now < secret.expiresAt;
}

/**
 * The expiry a rotation gives to an older secret: now + grace, unless it already stops
 * sooner. Already-expired secrets stay expired.
 */
export function expiryAfterRotation(current: number | null, now: number, graceMs: number): number {
  const rotated = now + graceMs;
  return current === null ? rotated : Math.min(current, rotated);
}

// Schemas for request fields, built on the rules above: the edge parses with these.

/** A request field's schema from one of the rules: its refusal as the field's validation message. */
export function fromRule<T>(rule: (raw: string) => Checked<T>) {
  return z.string().transform((raw, ctx) => {
    const checked = rule(raw);
    if (!checked.ok) {
      ctx.addIssue({ code: "custom", message: checked.message });
      return z.NEVER;
    }
    return checked.value;
  });
}

export const merchantNameInput = fromRule(normaliseName);
/** null: none set, the merchant's name is shown. */
export const displayNameInput = fromRule(normaliseDisplayName);
export const callbackUrlInput = fromRule(normaliseCallbackUrl);
export const allowedIpsInput = z.array(z.string()).transform((raw, ctx) => {
  const checked = normaliseAllowedIps(raw);
  if (!checked.ok) {
    ctx.addIssue({ code: "custom", message: checked.message });
    return z.NEVER;
  }
  return checked.value;
});
export const merchantIdInput = z.string().min(1, "is required").max(100, "is not a merchant id");
