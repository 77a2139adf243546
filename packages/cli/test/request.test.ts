import http from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import { verify } from "@payments/signing";
import { signedRequest } from "../src/commands/request.js";
import { UsageError } from "../src/errors.js";
import { cli, closedPort, singleJson } from "./capture.js";

const KEY = "key_test";
const SECRET = "secret_test";

interface Seen {
  method: string;
  path: string;
  body: string;
  contentType: string | undefined;
  validSignature: boolean;
}

// A gateway stand-in that checks the signature over the exact bytes it received.
let seen: Seen[] = [];
let baseUrl = "";
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const path = req.url ?? "/";
    const validSignature =
      req.headers["x-api-key"] === KEY &&
      verify([SECRET], { timestamp: String(req.headers["x-timestamp"]), method: req.method ?? "", path, body }, String(req.headers["x-signature"]));
    seen.push({ method: req.method ?? "", path, body: body.toString("utf8"), contentType: req.headers["content-type"], validSignature });
    const timestamp = Math.floor(Date.now() / 1000);
    if (!validSignature) {
      res.writeHead(401, { "content-type": "application/json", "x-request-id": "req_1" });
      res.end(JSON.stringify({ success: false, error: { code: "INVALID_SIGNATURE", message: "signature does not match" }, timestamp }));
      return;
    }
    res.writeHead(path.startsWith("/v1/deposit") ? 201 : 200, { "content-type": "application/json", "x-request-id": "req_2" });
    res.end(JSON.stringify({ success: true, data: { echo: path }, timestamp }));
  });
});

test.before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(() => new Promise<void>((resolve) => server.close(() => resolve())));
test.beforeEach(() => {
  seen = [];
});

test("signedRequest signs the path with its query as it will be sent, and the body byte for byte", (t) => {
  const now = new Date("2026-11-22T10:00:00Z");
  const data = '{"processId":"o-1", "amount":15050}';
  const { url, init } = signedRequest({ method: "post", path: "/v1/deposit?x=1", data, baseUrl: "http://gw.example:8080/ignored", apiKey: KEY, apiSecret: SECRET }, now);
  t.is(url.toString(), "http://gw.example:8080/v1/deposit?x=1");
  t.is(init.method, "POST");
  t.is(init.body, data);
  t.is(init.headers["X-Timestamp"], "1795341600");
  t.is(init.headers["Content-Type"], "application/json");
  t.true(verify([SECRET], { timestamp: "1795341600", method: "POST", path: "/v1/deposit?x=1", body: data }, init.headers["X-Signature"] ?? ""));
});

test("signedRequest refuses a body on GET, a relative path and an unknown method", (t) => {
  const base = { baseUrl: "http://localhost:8080", apiKey: KEY, apiSecret: SECRET };
  t.throws(() => signedRequest({ ...base, method: "GET", path: "/v1/banks", data: "{}" }), { instanceOf: UsageError });
  t.throws(() => signedRequest({ ...base, method: "GET", path: "v1/banks" }), { instanceOf: UsageError, message: /start with "\/"/ });
  t.throws(() => signedRequest({ ...base, method: "FETCH", path: "/v1/banks" }), { instanceOf: UsageError });
});

test.serial("request POST with --json sends a body the gateway verifies and prints only the response JSON", async (t) => {
  const data = '{"processId":"o-1","amount":15050}';
  const r = await cli(["request", "POST", "/v1/deposit", "--data", data, "--api-key", KEY, "--api-secret", SECRET, "--base-url", baseUrl, "--json"]);
  t.is(r.code, 0, r.stderr);
  const body = singleJson(r.stdout) as { success: boolean; data: unknown };
  t.true(body.success);
  t.deepEqual(body.data, { echo: "/v1/deposit" });
  t.is(seen.length, 1);
  t.true(seen[0]?.validSignature);
  t.is(seen[0]?.body, data);
  t.is(seen[0]?.contentType, "application/json");
});

test.serial("request GET with a query, credentials and gateway from the environment, readable output", async (t) => {
  const r = await cli(["request", "get", "/v1/deposit?processId=o%201"], { PAYMENTS_API_KEY: KEY, PAYMENTS_API_SECRET: SECRET, GATEWAY_URL: baseUrl });
  t.is(r.code, 0, r.stderr);
  t.true(seen[0]?.validSignature);
  t.is(seen[0]?.path, "/v1/deposit?processId=o%201");
  t.regex(r.stdout, /^HTTP 201 Created\nX-Request-Id: req_2\n\{\n {2}"success": true/);
});

test.serial("a non-2xx response is printed and exits 1 with the envelope's error code on stderr", async (t) => {
  const r = await cli(["request", "GET", "/v1/banks", "--api-key", KEY, "--api-secret", "wrong", "--base-url", baseUrl, "--json"]);
  t.is(r.code, 1);
  t.is((singleJson(r.stdout) as { error: { code: string } }).error.code, "INVALID_SIGNATURE");
  t.is(r.stderr, "error: HTTP 401: INVALID_SIGNATURE: signature does not match\n");
});

test("request without credentials is a usage error", async (t) => {
  const r = await cli(["request", "GET", "/v1/banks", "--base-url", "http://127.0.0.1:1"]);
  t.is(r.code, 2);
  t.regex(r.stderr, /--api-key and --api-secret/);
});

test("request to a gateway that is not running says so", async (t) => {
  const port = await closedPort();
  const r = await cli(["request", "GET", "/v1/banks", "--api-key", KEY, "--api-secret", SECRET, "--base-url", `http://127.0.0.1:${port}`]);
  t.is(r.code, 1);
  t.regex(r.stderr, new RegExp(`^error: cannot reach http://127\\.0\\.0\\.1:${port} — is \`pnpm start\` running\\?`));
});
