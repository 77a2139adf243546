import type { IncomingMessage } from "node:http";
import test from "ava";
import { callerIp, compileTrustedProxies, ipAllowed, ipInRanges, normaliseIp, parseAllowList, parseRange } from "../src/ip-rule.js";

function request(remoteAddress: string, forwardedFor?: string): Pick<IncomingMessage, "headers" | "socket"> {
  return {
    headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
    socket: { remoteAddress } as IncomingMessage["socket"],
  };
}

test("an IPv4 address matches itself only", (t) => {
  const list = parseAllowList(["203.0.113.7"]);
  t.true(ipInRanges("203.0.113.7", list));
  t.false(ipInRanges("203.0.113.8", list));
});

test("an IPv4 CIDR matches the addresses inside it and none outside", (t) => {
  const list = parseAllowList(["10.1.0.0/16"]);
  t.true(ipInRanges("10.1.0.1", list));
  t.true(ipInRanges("10.1.255.254", list));
  t.false(ipInRanges("10.2.0.1", list));
});

test("IPv6 addresses and CIDRs match in any textual form", (t) => {
  const list = parseAllowList(["2001:db8::1", "2001:db8:aa::/48"]);
  t.true(ipInRanges("2001:0db8:0000:0000:0000:0000:0000:0001", list));
  t.true(ipInRanges("2001:db8:aa:ffff::5", list));
  t.false(ipInRanges("2001:db8:ab::1", list));
  t.false(ipInRanges("2001:db8::2", list));
});

test("an IPv4-mapped IPv6 caller is matched as its IPv4 address", (t) => {
  const list = parseAllowList(["192.0.2.0/24"]);
  t.true(ipInRanges("::ffff:192.0.2.10", list));
  t.is(normaliseIp("::ffff:192.0.2.10")?.toString(), "192.0.2.10");
});

test("an IPv4-mapped range in the list covers the plain IPv4 addresses", (t) => {
  t.deepEqual(parseRange("::ffff:192.0.2.0/120")?.[1], 24);
  t.true(ipInRanges("192.0.2.99", parseAllowList(["::ffff:192.0.2.0/120"])));
});

test("IPv4 and IPv6 never match each other's ranges", (t) => {
  t.false(ipInRanges("::1", parseAllowList(["0.0.0.0/0"])));
  t.false(ipInRanges("127.0.0.1", parseAllowList(["::/0"])));
});

test("entries that are not addresses are ignored and garbage callers match nothing", (t) => {
  const list = parseAllowList(["not-an-ip", "10.0.0.0/99", "10.0.0.1"]);
  t.is(list.length, 1);
  t.false(ipInRanges("", list));
  t.false(ipInRanges("10.0.0.1, 10.0.0.2", list));
});

test("empty list: open to any IP, except on routes that require the allow-list", (t) => {
  t.true(ipAllowed("198.51.100.1", [], false));
  t.false(ipAllowed("198.51.100.1", [], true));
});

test("non-empty list: every route requires a listed IP", (t) => {
  const list = parseAllowList(["198.51.100.0/24"]);
  t.true(ipAllowed("198.51.100.1", list, false));
  t.true(ipAllowed("198.51.100.1", list, true));
  t.false(ipAllowed("203.0.113.1", list, false));
  t.false(ipAllowed("203.0.113.1", list, true));
});

test("without trusted proxies X-Forwarded-For is ignored: the socket address is the caller", (t) => {
  const trust = compileTrustedProxies([]);
  t.is(callerIp(request("203.0.113.9", "198.51.100.1"), trust), "203.0.113.9");
});

test("X-Forwarded-For from an untrusted peer is ignored even when it names a trusted proxy", (t) => {
  const trust = compileTrustedProxies(["10.0.0.1"]);
  t.is(callerIp(request("203.0.113.9", "198.51.100.1, 10.0.0.1"), trust), "203.0.113.9");
});

test("from a trusted proxy the nearest untrusted X-Forwarded-For hop is the caller", (t) => {
  const trust = compileTrustedProxies(["10.0.0.0/8"]);
  t.is(callerIp(request("10.0.0.1", "198.51.100.1"), trust), "198.51.100.1");
  // A client-supplied first hop cannot be used to spoof: only hops added by trusted proxies are skipped.
  t.is(callerIp(request("10.0.0.1", "192.0.2.66, 198.51.100.1, 10.0.0.2"), trust), "198.51.100.1");
});

test("a trusted proxy connecting over IPv4-mapped IPv6 is recognised and the caller normalised", (t) => {
  const trust = compileTrustedProxies(["127.0.0.1"]);
  t.is(callerIp(request("::ffff:127.0.0.1", "::ffff:198.51.100.4"), trust), "198.51.100.4");
  t.is(callerIp(request("::ffff:203.0.113.5"), compileTrustedProxies([])), "203.0.113.5");
});
