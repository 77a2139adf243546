import test from "ava";
import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import { jsonDepth, MAX_JSON_DEPTH } from "../src/json-depth.js";
import { startFakeApp, type FakeMerchant } from "./fake-app.js";
import { signedCall, type Reply } from "./http-client.js";

/*
 * Deeply nested JSON never makes a 500: any field nested more than MAX_JSON_DEPTH levels is
 * a 400 VALIDATION_ERROR naming it, on every route that reads a body, before any service call.
 */

/** JSON text of `levels` nested objects: 1 is `{}`, 2 is `{"a":{}}`. */
function nestedObjects(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
}

/** JSON text of `levels` nested arrays. */
function nestedArrays(levels: number): string {
  return `${"[".repeat(levels)}${"]".repeat(levels)}`;
}

test("jsonDepth counts levels of objects and arrays, scalars being 0", (t) => {
  t.is(jsonDepth(1), 0);
  t.is(jsonDepth("x"), 0);
  t.is(jsonDepth(null), 0);
  t.is(jsonDepth({}), 1);
  t.is(jsonDepth([]), 1);
  t.is(jsonDepth({ a: [1, { b: "c" }], d: 2 }), 3);
  t.is(jsonDepth([[], [[[]]], {}]), 4);
  t.is(jsonDepth(JSON.parse(nestedObjects(40))), 40);
});

test("jsonDepth measures a depth JSON.stringify cannot handle, without recursion, and stops early when told", (t) => {
  const deep: unknown = JSON.parse(nestedArrays(100_000));
  t.throws(() => JSON.stringify(deep), { instanceOf: RangeError });
  t.is(jsonDepth(deep), 100_000);
  t.is(jsonDepth(deep, MAX_JSON_DEPTH), MAX_JSON_DEPTH + 1);
});

const shop: FakeMerchant = { merchantId: "m_shop", apiKey: "pk_shop", apiSecret: "sk_shop", allowedIps: ["127.0.0.1"] };

async function startApp() {
  const sent: string[] = [];
  const app = await startFakeApp({
    merchants: [shop],
    deposits: {
      createDeposit: (req) => {
        sent.push(req.metadataJson);
        throw serviceError(Code.AlreadyExists, "DUPLICATE_TRANSACTION", "processId already used", { details: { transactionId: "dep_1" } });
      },
      cancelDeposit: () => {
        throw serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", "no deposit");
      },
    },
    payouts: {
      createWithdrawal: () => {
        throw serviceError(Code.AlreadyExists, "DUPLICATE_TRANSACTION", "processId already used");
      },
    },
  });
  return { app, sent };
}

function post(app: Awaited<ReturnType<typeof startFakeApp>>, path: string, body: string): Promise<Reply> {
  return signedCall(app.url, shop, app.clock, { method: "POST", path, headers: { "Content-Type": "application/json" }, body });
}

function depositBody(metadata: string): string {
  return `{"processId":"p1","amount":100,"customer":{"id":"c","name":"N","username":"u"},"metadata":${metadata}}`;
}

function tooDeep(t: { is(a: unknown, b: unknown, m?: string): void; regex(s: string, r: RegExp, m?: string): void }, reply: Reply, field: string): void {
  t.is(reply.status, 400, reply.text.slice(0, 300));
  t.is(reply.json.success, false);
  t.is(reply.json.error?.code, "VALIDATION_ERROR");
  t.regex(reply.json.error?.message ?? "", new RegExp(`^${field}: is nested too deeply`));
}

test("metadata nested thousands of levels deep is 400 VALIDATION_ERROR naming metadata, not a 500, and never reaches the service", async (t) => {
  const { app, sent } = await startApp();
  t.teardown(app.close);
  for (const levels of [3_000, 5_000, 10_000]) tooDeep(t, await post(app, "/v1/deposit", depositBody(nestedObjects(levels))), "metadata");
  tooDeep(t, await post(app, "/v1/deposit", depositBody(`{"list":${nestedArrays(30_000)}}`)), "metadata");
  t.deepEqual(sent, []);
  t.false(app.logLines.some((line) => line.includes('"level":"error"')), "nothing to log as an error");
});

test(`metadata ${MAX_JSON_DEPTH} levels deep reaches the service intact; ${MAX_JSON_DEPTH + 1} is refused`, async (t) => {
  const { app, sent } = await startApp();
  t.teardown(app.close);
  const deepest = nestedObjects(MAX_JSON_DEPTH);
  t.is((await post(app, "/v1/deposit", depositBody(deepest))).json.error?.code, "DUPLICATE_TRANSACTION");
  t.deepEqual(sent, [deepest]);
  tooDeep(t, await post(app, "/v1/deposit", depositBody(nestedObjects(MAX_JSON_DEPTH + 1))), "metadata");
  t.is(sent.length, 1);
});

test("a deep value anywhere in any body is a 400 naming its field: unknown fields, withdrawals, cancels", async (t) => {
  const { app } = await startApp();
  t.teardown(app.close);
  const deep = nestedObjects(10_000);
  tooDeep(t, await post(app, "/v1/deposit", `{"processId":"p1","extra":${deep}}`), "extra");
  tooDeep(t, await post(app, "/v1/deposit", `{"customer":${deep}}`), "customer");
  tooDeep(t, await post(app, "/v1/withdraw", `{"processId":"w1","name":${nestedArrays(20_000)}}`), "name");
  tooDeep(t, await post(app, "/v1/deposit/dep_1/cancel", `{"reason":${deep}}`), "reason");
  tooDeep(t, await post(app, "/v1/withdraw/wd_1/cancel", `{"x":${deep}}`), "x");
  tooDeep(t, await post(app, "/v1/events/ev_1/redeliver", `{"x":${deep}}`), "x");
});

test("a body that is itself a deep array is 'body: must be a JSON object', and a deep body at the size limit is a 400, never a 500", async (t) => {
  const { app } = await startApp();
  t.teardown(app.close);
  const array = await post(app, "/v1/deposit", nestedArrays(30_000));
  t.is(array.status, 400);
  t.is(array.json.error?.message, "body: must be a JSON object");

  // 64 KiB exactly of nesting.
  const levels = Math.floor((65_536 - 12) / 6);
  const body = `{"m":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}`;
  t.true(Buffer.byteLength(body) <= 65_536);
  tooDeep(t, await post(app, "/v1/deposit", body), "m");
});
