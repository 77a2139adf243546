import type { IncomingMessage } from "node:http";
import ipaddr from "ipaddr.js";
import proxyAddr from "proxy-addr";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type IpRange = [Address, number];

/** IPv4-mapped IPv6 (::ffff:1.2.3.4) becomes plain IPv4, so one rule covers both socket flavours. */
export function normaliseIp(text: string): Address | undefined {
  try {
    return ipaddr.process(text.trim());
  } catch {
    return undefined;
  }
}

/** One allow-list entry: a bare address is a /32 (/128); an IPv4-mapped range becomes its IPv4 range. */
export function parseRange(entry: string): IpRange | undefined {
  const text = entry.trim();
  try {
    if (!text.includes("/")) {
      const address = ipaddr.process(text);
      return [address, address.kind() === "ipv4" ? 32 : 128];
    }
    const [address, bits] = ipaddr.parseCIDR(text);
    if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
    }
    return [address, bits];
  } catch {
    return undefined;
  }
}

/** Parses a merchant's list once; entries that are not addresses are dropped (the merchant service validates them). */
export function parseAllowList(entries: readonly string[]): IpRange[] {
  return entries.map(parseRange).filter((range): range is IpRange => range !== undefined);
}

export function ipInRanges(ip: string, ranges: readonly IpRange[]): boolean {
  const address = normaliseIp(ip);
  if (!address) return false;
  return ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

/**
 * The IP rule of decisions.md. A non-empty list admits only the addresses it covers; an
 * empty list admits anyone, except on routes that always need a listed IP (withdrawals).
 */
export function ipAllowed(ip: string, ranges: readonly IpRange[], routeRequiresAllowList: boolean): boolean {
  if (ranges.length === 0) return !routeRequiresAllowList;
  return ipInRanges(ip, ranges);
}

export type TrustFunction = (address: string, hop: number) => boolean;

/** Trust only the configured proxies; with none, X-Forwarded-For is ignored. */
export function compileTrustedProxies(entries: readonly string[]): TrustFunction {
  return proxyAddr.compile([...entries]);
}

/**
 * The caller: the socket address, or the nearest X-Forwarded-For hop not itself a trusted
 * proxy when the socket peer is trusted. Normalised (no IPv4-mapped form).
 */
export function callerIp(req: Pick<IncomingMessage, "headers" | "socket">, trust: TrustFunction): string {
  // A socket closed before this point has no address; such a caller matches no list.
  const raw = (proxyAddr(req as IncomingMessage, trust) as string | undefined) ?? "";
  return normaliseIp(raw)?.toString() ?? raw;
}
