import test from "ava";
import { callbackUrlRefusal, checkLiteralHost, guardedLookup, isAllowedAddress, literalAddress } from "@payments/kit";
import { createCallbackPoster } from "../src/post-callback.js";
import { CallbackReceiver, type Answer } from "@payments/testing";

const refused = [
  ["127.0.0.1", "loopback"],
  ["10.1.2.3", "private (10/8)"],
  ["172.16.0.1", "private (172.16/12)"],
  ["192.168.1.10", "private (192.168/16)"],
  ["169.254.169.254", "link-local (cloud metadata)"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["0.0.0.0", "unspecified"],
  ["255.255.255.255", "broadcast"],
  ["224.0.0.1", "multicast"],
  ["::1", "IPv6 loopback"],
  ["fe80::1", "IPv6 link-local"],
  ["fd00::1", "IPv6 unique-local"],
  ["::", "IPv6 unspecified"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:10.0.0.1", "IPv4-mapped private"],
  ["::127.0.0.1", "IPv4-compatible loopback"],
  ["::10.0.0.1", "IPv4-compatible private"],
  ["::93.184.216.34", "IPv4-compatible, deprecated (::/96)"],
] as const;

for (const [address, what] of refused) {
  test(`a callback to ${address} (${what}) is refused unless private addresses are allowed`, (t) => {
    t.false(isAllowedAddress(address, false));
    t.true(isAllowedAddress(address, true));
  });
}

test("public unicast addresses are allowed", (t) => {
  for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.216.34"]) t.true(isAllowedAddress(address, false), address);
  t.false(isAllowedAddress("not an address", false));
});

test("an IPv4-compatible IPv6 literal in a callback URL is refused", (t) => {
  t.throws(() => checkLiteralHost(new URL("https://[::127.0.0.1]/cb"), false), { message: /ipv4Compatible/ });
});

test("setting a callback URL on a private, loopback or local name is refused unless private addresses are allowed", async (t) => {
  for (const url of ["https://127.0.0.1/cb", "https://[::1]/cb", "https://[::127.0.0.1]/cb", "https://10.0.0.5/cb", "https://localhost/cb", "https://api.localhost/cb", "https://169.254.169.254/latest"]) {
    t.truthy(await callbackUrlRefusal(new URL(url), false), url);
    t.is(await callbackUrlRefusal(new URL(url), true), undefined, url);
  }
  t.is(await callbackUrlRefusal(new URL("https://93.184.216.34/cb"), false), undefined);
  t.is(await callbackUrlRefusal(new URL("https://no-such-host.invalid/cb"), false, 500), undefined, "an unresolvable name is checked again at each connection");
});

test("IP literals in URLs are recognised, with or without IPv6 brackets", (t) => {
  t.is(literalAddress("[::1]"), "::1");
  t.is(literalAddress("10.0.0.1"), "10.0.0.1");
  t.is(literalAddress("shop.example"), undefined);
  t.throws(() => checkLiteralHost(new URL("http://[::1]:8080/cb"), false), { message: /loopback/ });
  t.notThrows(() => checkLiteralHost(new URL("http://[::1]:8080/cb"), true));
  t.notThrows(() => checkLiteralHost(new URL("https://shop.example/cb"), false), "names are checked when they resolve");
});

test("a name resolving to a private address is refused at connect time", async (t) => {
  const lookup = guardedLookup(false);
  const error = await new Promise<Error | null>((resolve) => lookup("localhost", {}, (err) => resolve(err)));
  t.regex(String(error?.message), /refused to call localhost \(.*\): a loopback address/);
  const allowed = await new Promise<string | unknown[]>((resolve, reject) => guardedLookup(true)("localhost", {}, (err, address) => (err ? reject(err) : resolve(address))));
  t.truthy(allowed);
});

test("the poster refuses loopback by IP and by name without sending anything, and sends when allowed", async (t) => {
  const receiver = await new CallbackReceiver().start();
  const strict = createCallbackPoster({ timeoutMs: 2000, allowPrivate: false });
  const open = createCallbackPoster({ timeoutMs: 2000, allowPrivate: true });
  try {
    const byIp = await strict.post({ url: receiver.url(), headers: {}, body: "{}" });
    t.false(byIp.delivered);
    t.is(byIp.statusCode, 0);
    t.regex(byIp.error, /refused to call 127\.0\.0\.1: a loopback address/);
    const byName = await strict.post({ url: receiver.url().replace("127.0.0.1", "localhost"), headers: {}, body: "{}" });
    t.false(byName.delivered);
    t.regex(byName.error, /refused to call localhost/);
    t.is(receiver.received.length, 0, "nothing reached the private address");
    const sent = await open.post({ url: receiver.url(), headers: { "content-type": "application/json" }, body: "{}" });
    t.true(sent.delivered);
    t.is(receiver.received.length, 1);
  } finally {
    await strict.close();
    await open.close();
    await receiver.stop();
  }
});

test("the poster follows no redirect, reads a bounded part of an error body, and gives up at the timeout", async (t) => {
  const receiver = await new CallbackReceiver((callback): Answer | "hang" => {
    if (callback.path === "/redirect") return { status: 302, headers: { location: "/elsewhere" } };
    if (callback.path === "/huge") return { status: 500, body: "x".repeat(2_000_000) };
    if (callback.path === "/slow") return "hang";
    if (callback.path === "/busy") return { status: 503, headers: { "retry-after": "42" }, body: "  try\n later  " };
    return { status: 200 };
  }).start();
  const poster = createCallbackPoster({ timeoutMs: 500, allowPrivate: true });
  try {
    const redirect = await poster.post({ url: receiver.url("/redirect"), headers: {}, body: "{}" });
    t.false(redirect.delivered);
    t.is(redirect.statusCode, 302);
    t.is(redirect.error, "HTTP 302");
    t.deepEqual(
      receiver.received.map((c) => c.path),
      ["/redirect"],
      "the redirect target was never called",
    );

    const huge = await poster.post({ url: receiver.url("/huge"), headers: {}, body: "{}" });
    t.is(huge.statusCode, 500);
    t.true(huge.error.length <= 500, `error kept short (${huge.error.length})`);
    t.true(huge.error.startsWith("HTTP 500: xxx"));

    const busy = await poster.post({ url: receiver.url("/busy"), headers: {}, body: "{}" });
    t.is(busy.error, "HTTP 503: try later", "whitespace folded");
    t.is(busy.retryAfterMs, 42_000);

    const slow = await poster.post({ url: receiver.url("/slow"), headers: {}, body: "{}" });
    t.false(slow.delivered);
    t.is(slow.statusCode, 0);
    t.is(slow.error, "no answer within 500 ms");
    t.true(slow.latencyMs >= 450, `gave up after ${slow.latencyMs} ms`);

    const refused = await poster.post({ url: "http://127.0.0.1:1/cb", headers: {}, body: "{}" });
    t.regex(refused.error, /ECONNREFUSED/);
  } finally {
    await poster.close();
    await receiver.stop();
  }
});
