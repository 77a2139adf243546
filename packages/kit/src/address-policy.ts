import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { isIP } from "node:net";
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

/** The ipaddr.js range of an address ("unicast" for a public one; "private", "loopback", "linkLocal", ...). */
export function addressRange(address: string): string {
  return ipaddr.process(address).range();
}

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
      if (refused) return callback(refusal(hostname, refused.address) as unknown as NodeJS.ErrnoException, "");
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
      callback(null, first.address, first.family);
    });
  };
}
