import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which addresses a callback may be sent to. A callback URL is set by a merchant, so without
 * this rule it would let anyone make our servers call into our own network (SSRF): only
 * public unicast addresses are allowed unless CALLBACK_ALLOW_PRIVATE is set.
 */

export class AddressRefused extends Error {
  override name = "AddressRefused";
  readonly code = "CALLBACK_ADDRESS_REFUSED";
}

/**
 * The ipaddr.js range of an address ("unicast" for a public one; "private", "loopback",
 * "linkLocal", ...). ipaddr.js calls the deprecated IPv4-compatible IPv6 block (::/96,
 * RFC 4291 §2.5.5.1) unicast, yet `::127.0.0.1` reaches 127.0.0.1 on stacks that still route
 * it, so that block has a range of its own here.
 */
export function addressRange(address: string): string {
  const range = ipaddr.process(address).range();
  if (range !== "unicast" || isIP(address) !== 6) return range;
  // ipaddr.js reads "::a.b.c.d" as if it were "::ffff:a.b.c.d"; Node's own parser does not.
  return IPV4_COMPATIBLE.check(address, "ipv6") ? "ipv4Compatible" : range;
}

const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet("::", 96, "ipv6");

/** Whether a callback may go to this IP address. IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry. */
export function isAllowedAddress(address: string, allowPrivate: boolean): boolean {
  if (allowPrivate) return true;
  if (!ipaddr.isValid(address)) return false;
  return addressRange(address) === "unicast";
}

function refusal(host: string, address: string): AddressRefused {
  const shown = host === address ? address : `${host} (${address})`;
  return new AddressRefused(`refused to call ${shown}: a ${addressRange(address)} address (set CALLBACK_ALLOW_PRIVATE=1 only in development)`);
}

/** The URL's host when it is an IP literal ("[::1]" → "::1"), else undefined. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}

/**
 * Refuses a URL whose host is a disallowed IP literal; names resolve later, in
 * `guardedLookup`, on the connection itself.
 */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const literal = literalAddress(url.hostname);
  if (literal !== undefined && !isAllowedAddress(literal, allowPrivate)) throw refusal(literal, literal);
}

/** Host names that always mean this machine, whatever DNS says (RFC 6761). */
function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/**
 * The check made when a merchant sets a callback URL: an IP literal, a `localhost` name or a
 * name that resolves (now) to a refused address is refused with the reason. A name that does
 * not resolve yet is let through: the check that counts runs again on every connection
 * (`guardedLookup`). Returns the reason, or undefined when the URL may be used.
 */
export async function callbackUrlRefusal(url: URL, allowPrivate: boolean, lookupTimeoutMs = 2000): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const literal = literalAddress(url.hostname);
  if (literal !== undefined) return isAllowedAddress(literal, false) ? undefined : refusal(literal, literal).message;
  if (isLocalName(url.hostname)) return `refused to call ${url.hostname}: a loopback name (set CALLBACK_ALLOW_PRIVATE=1 only in development)`;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), lookupTimeoutMs);
  });
  try {
    const addresses = await Promise.race([dnsPromises.lookup(url.hostname, { all: true }).catch(() => undefined), timeout]);
    const refused = addresses?.find((a) => !isAllowedAddress(a.address, false));
    return refused ? refusal(url.hostname, refused.address).message : undefined;
  } finally {
    clearTimeout(timer);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` for the HTTP client's connections that fails when any address the name
 * resolves to is not allowed. Checking at connect time, on the addresses actually used,
 * leaves no gap for a name that resolves differently between a check and the connection
 * (DNS rebinding).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      const refused = addresses.find((a) => !isAllowedAddress(a.address, allowPrivate));
      if (refused) return callback(refusal(hostname, refused.address), "");
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
      callback(null, first.address, first.family);
    });
  };
}
