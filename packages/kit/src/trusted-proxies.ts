import proxyAddr from "proxy-addr";
import { envVar } from "./config.js";

/** True when proxy-addr accepts the entry: an IP, a CIDR, an IP/netmask, or one of its range names. */
export function isTrustedProxyEntry(entry: string): boolean {
  try {
    proxyAddr.compile(entry);
    return true;
  } catch {
    return false;
  }
}

/**
 * TRUSTED_PROXIES of an HTTP edge (the gateway, the console): the proxies whose X-Forwarded-For
 * is believed, as proxy-addr reads them; empty (the default) believes none.
 */
export const trustedProxiesVar = () =>
  envVar.list().refine((entries) => entries.every(isTrustedProxyEntry), {
    message: "expected a comma-separated list of IPs or CIDRs (or loopback, linklocal, uniquelocal)",
  });
