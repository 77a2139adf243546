import test from "ava";
import { startFakeApp } from "./fake-app.js";
import { call } from "./http-client.js";

// The gateway's root: the address `pnpm start` names for a browser. It leads to the API
// reference (GET /docs), behind a path prefix too; nothing else lives there.

test("GET / redirects (302) to the API reference, which answers the docs page", async (t) => {
  const app = await startFakeApp();
  t.teardown(() => app.close());
  const root = await call(app.url, { path: "/", headers: { Accept: "text/html" } });
  t.is(root.status, 302);
  t.is(root.headers.location, "/docs");
  t.is(root.headers["cache-control"], "no-cache");
  const head = await call(app.url, { method: "HEAD", path: "/" });
  t.is(head.status, 302);
  t.is(head.headers.location, "/docs");

  const docs = await fetch(`${app.url}/`);
  t.is(docs.status, 200);
  t.is(docs.url, `${app.url}/docs`);
  t.regex(docs.headers.get("content-type") ?? "", /^text\/html/);
  t.regex(await docs.text(), /\/openapi\.json/);
});

test("behind PUBLIC_BASE_URL's path prefix, GET / leads to the prefixed API reference", async (t) => {
  const app = await startFakeApp({ env: { PUBLIC_BASE_URL: "https://pay.example.com/gateway" } });
  t.teardown(() => app.close());
  const root = await call(app.url, { path: "/" });
  t.is(root.status, 302);
  t.is(root.headers.location, "/gateway/docs");
});

test("the root takes GET and HEAD only (405 with Allow); a query changes nothing; other paths stay 404 NOT_FOUND", async (t) => {
  const app = await startFakeApp();
  t.teardown(() => app.close());
  const posted = await call(app.url, { method: "POST", path: "/", headers: { "Content-Type": "application/json" }, body: "{}" });
  t.is(posted.status, 405);
  t.is(posted.json.error?.code, "METHOD_NOT_ALLOWED");
  t.is(posted.headers.allow, "GET, HEAD");
  t.is((await call(app.url, { path: "/?utm_source=x" })).headers.location, "/docs");
  const unknown = await call(app.url, { path: "/index.html" });
  t.is(unknown.status, 404);
  t.is(unknown.json.error?.code, "NOT_FOUND");
});
