import http2 from "node:http2";
import test from "ava";
import { createLogger, createMetrics, listenRpc, type HttpRoute } from "../src/index.js";

// The plain HTTP seam of the RPC port (src/http-routes.ts): a route gets the exact body bytes,
// its JSON answer is sent as is; the kit enforces the body limit, the method, and turns a
// throw into a bare 500.

const logger = createLogger({ service: "test", level: "silent" });

async function serveRoutes(http: HttpRoute[], internalToken?: string) {
  const server = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  server.serve({ routes: () => undefined, services: [], logger, metrics: createMetrics(), internalToken, http });
  return server;
}

const echo: HttpRoute = {
  method: "POST",
  pathPrefix: "/hooks/",
  maxBodyBytes: 1000,
  handle: (req) => ({ status: 201, body: { path: req.path, bytes: req.rawBody.toString("hex"), tag: req.headers["x-tag"] ?? null }, headers: { "x-answered": "yes" } }),
};

test("a route under its prefix gets the raw body and headers, and answers JSON (INTERNAL_API_TOKEN does not apply)", async (t) => {
  const server = await serveRoutes([echo, { method: "POST", pathPrefix: "/boom", handle: () => Promise.reject(new Error("SELECT * FROM secret_table")) }], "a-long-internal-token");
  t.teardown(() => server.close(0));
  const body = Buffer.from([0x7b, 0x00, 0xff]);
  const res = await fetch(`${server.url}/hooks/a?x=1`, { method: "POST", body, headers: { "X-Tag": "t1" } });
  t.is(res.status, 201);
  t.is(res.headers.get("content-type"), "application/json");
  t.is(res.headers.get("x-answered"), "yes");
  t.deepEqual(await res.json(), { path: "/hooks/a", bytes: "7b00ff", tag: "t1" });

  const boom = await fetch(`${server.url}/boom`, { method: "POST", body: "{}" });
  t.is(boom.status, 500);
  const text = await boom.text();
  t.deepEqual(JSON.parse(text), { code: "INTERNAL", message: "internal error" });
  t.notRegex(text, /SELECT|secret_table|at /);

  const wrongMethod = await fetch(`${server.url}/hooks/a`);
  t.is(wrongMethod.status, 405);
  t.is(wrongMethod.headers.get("allow"), "POST");

  const elsewhere = await fetch(`${server.url}/nothing-here`, { method: "POST", body: "{}" });
  t.is(elsewhere.status, 404);
  t.is((await fetch(`${server.url}/livez`)).status, 200);
});

test("a body over the route's limit is refused with 413 and the handler never runs, declared or streamed", async (t) => {
  let calls = 0;
  const server = await serveRoutes([{ ...echo, handle: (req) => (calls++, echo.handle(req)) }]);
  t.teardown(() => server.close(0));
  const declared = await fetch(`${server.url}/hooks/a`, { method: "POST", body: "x".repeat(1001) });
  t.is(declared.status, 413);
  t.like(await declared.json(), { code: "PAYLOAD_TOO_LARGE" });

  // Chunked: no content-length, the limit is found while reading.
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 5; i++) controller.enqueue(new TextEncoder().encode("y".repeat(300)));
      controller.close();
    },
  });
  const streamed = await fetch(`${server.url}/hooks/a`, { method: "POST", body: stream, duplex: "half" });
  t.is(streamed.status, 413);
  t.is(calls, 0);
  const exact = await fetch(`${server.url}/hooks/a`, { method: "POST", body: "z".repeat(1000) });
  t.is(exact.status, 201);
  t.is(calls, 1);
});

test("routes answer over HTTP/2 too", async (t) => {
  const server = await serveRoutes([echo]);
  t.teardown(() => server.close(0));
  const session = http2.connect(server.url);
  t.teardown(() => session.close());
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": "/hooks/h2", "content-type": "application/json" });
    let status = 0;
    let text = "";
    req.on("response", (headers) => (status = Number(headers[":status"])));
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => resolve({ status, text }));
    req.on("error", reject);
    req.end("hi");
  });
  t.is(status, 201);
  t.deepEqual(JSON.parse(text), { path: "/hooks/h2", bytes: "6869", tag: null });
});
