import test from "ava";
import { ConfigError } from "@payments/kit";
import { loadGatewayConfig } from "../src/config.js";
import { startGateway } from "../src/server.js";
import { TEST_OPERATOR_ENV } from "@payments/testing";

test("defaults match the documented settings", (t) => {
  const config = loadGatewayConfig({});
  t.like(config, {
    PORT: 8080,
    HOST: "0.0.0.0",
    TIMESTAMP_TOLERANCE: 300_000,
    BODY_LIMIT: 65_536,
    RATE_LIMIT_RPS: 100,
    RATE_LIMIT_BURST: 200,
    AUTH_FAILURE_LIMIT_RPS: 5,
    AUTH_FAILURE_LIMIT_BURST: 20,
    CHECKOUT_RATE_LIMIT_RPS: 10,
    CHECKOUT_RATE_LIMIT_BURST: 30,
    RATE_LIMIT_MAX_KEYS: 100_000,
    CREDENTIAL_CACHE_TTL: 30_000,
    RPC_TIMEOUT: 5_000,
    TRUSTED_PROXIES: [],
    LOG_LEVEL: "info",
  });
  t.is(config.PUBLIC_BASE_URL, undefined);
  t.is(config.METRICS_PORT, undefined);
  t.like(config, { RATE_LIMIT_NATS_TTL: 600_000, RATE_LIMIT_NATS_TIMEOUT: 50, RATE_LIMIT_NATS_LEASE: 100 });
  t.is(config.RATE_LIMIT_STORE, undefined, "decided at start: nats for the split gateway with NATS_URL, else memory");
  t.is(config.RATE_LIMIT_NATS_BUCKET, undefined, "<NATS_STREAM>_RATE_LIMITS");
});

test("the shared rate-limit store: nats needs NATS_URL; the bucket name, TTL and bound are checked", (t) => {
  t.like(loadGatewayConfig({ RATE_LIMIT_STORE: "nats", NATS_URL: "nats://127.0.0.1:4222", RATE_LIMIT_NATS_BUCKET: "EDGE_LIMITS", RATE_LIMIT_NATS_TTL: "1h", RATE_LIMIT_NATS_TIMEOUT: "20ms", RATE_LIMIT_NATS_LEASE: "0" }), {
    RATE_LIMIT_STORE: "nats",
    RATE_LIMIT_NATS_BUCKET: "EDGE_LIMITS",
    RATE_LIMIT_NATS_TTL: 3_600_000,
    RATE_LIMIT_NATS_TIMEOUT: 20,
    RATE_LIMIT_NATS_LEASE: 0,
  });
  const err = t.throws(() => loadGatewayConfig({ RATE_LIMIT_STORE: "nats", RATE_LIMIT_NATS_BUCKET: "edge.limits", RATE_LIMIT_NATS_TTL: "500ms", RATE_LIMIT_NATS_TIMEOUT: "10s", RATE_LIMIT_NATS_LEASE: "1m" }), { instanceOf: ConfigError });
  t.regex(err.message, /RATE_LIMIT_STORE: nats needs NATS_URL/);
  t.regex(err.message, /RATE_LIMIT_NATS_BUCKET/);
  t.regex(err.message, /RATE_LIMIT_NATS_TTL: must be at least 1s/);
  t.regex(err.message, /RATE_LIMIT_NATS_TIMEOUT: must be between 1ms and 5s/);
  t.regex(err.message, /RATE_LIMIT_NATS_LEASE: must be at most 10s/);
  t.throws(() => loadGatewayConfig({ RATE_LIMIT_STORE: "redis" }), { message: /RATE_LIMIT_STORE/ });
});

test("lists, durations and URLs are parsed", (t) => {
  const config = loadGatewayConfig({
    TRUSTED_PROXIES: "10.0.0.0/8, ::1,loopback",
    TIMESTAMP_TOLERANCE: "2m",
    PUBLIC_BASE_URL: "https://pay.example.com/",
    METRICS_PORT: "9464",
  });
  t.deepEqual(config.TRUSTED_PROXIES, ["10.0.0.0/8", "::1", "loopback"]);
  t.is(config.TIMESTAMP_TOLERANCE, 120_000);
  t.is(config.PUBLIC_BASE_URL, "https://pay.example.com");
  t.is(config.METRICS_PORT, 9464);
});

test("bad values are refused, each naming its variable", (t) => {
  const err = t.throws(() => loadGatewayConfig({ TRUSTED_PROXIES: "10.0.0.0/8,proxy.local", TIMESTAMP_TOLERANCE: "300", PUBLIC_BASE_URL: "ftp://x" }), {
    instanceOf: ConfigError,
  });
  t.regex(err.message, /TRUSTED_PROXIES/);
  t.regex(err.message, /TIMESTAMP_TOLERANCE: must be at least 1s/);
  t.regex(err.message, /PUBLIC_BASE_URL/);
});

test("the per-IP limits take 0 as off, but a burst must hold at least one request", (t) => {
  t.like(loadGatewayConfig({ AUTH_FAILURE_LIMIT_RPS: "0", CHECKOUT_RATE_LIMIT_RPS: "0" }), { AUTH_FAILURE_LIMIT_RPS: 0, CHECKOUT_RATE_LIMIT_RPS: 0 });
  const err = t.throws(() => loadGatewayConfig({ AUTH_FAILURE_LIMIT_BURST: "0", CHECKOUT_RATE_LIMIT_BURST: "-1", AUTH_FAILURE_LIMIT_RPS: "1.5" }), { instanceOf: ConfigError });
  t.regex(err.message, /AUTH_FAILURE_LIMIT_BURST/);
  t.regex(err.message, /CHECKOUT_RATE_LIMIT_BURST/);
  t.regex(err.message, /AUTH_FAILURE_LIMIT_RPS/);
});

test("the service URLs are http(s) URLs; CALLBACK_SENDER_SERVICE_URL like the others", (t) => {
  t.is(loadGatewayConfig({ CALLBACK_SENDER_SERVICE_URL: "http://callback-sender:9090" }).CALLBACK_SENDER_SERVICE_URL, "http://callback-sender:9090");
  t.is(loadGatewayConfig({}).CALLBACK_SENDER_SERVICE_URL, undefined);
  const err = t.throws(() => loadGatewayConfig({ CALLBACK_SENDER_SERVICE_URL: "callback-sender:9090" }), { instanceOf: ConfigError });
  t.regex(err.message, /CALLBACK_SENDER_SERVICE_URL/);
});

test("startGateway refuses to start without the callback-sender's URL, naming the variable", async (t) => {
  const url = "http://127.0.0.1:9";
  const err = await t.throwsAsync(
    startGateway({ env: { ...TEST_OPERATOR_ENV, PORT: "0", LOG_LEVEL: "silent" }, merchantUrl: url, bankCatalogUrl: url, depositUrl: url, payoutUrl: url }),
    { instanceOf: ConfigError },
  );
  t.regex(err.message, /CALLBACK_SENDER_SERVICE_URL: required/);
});
