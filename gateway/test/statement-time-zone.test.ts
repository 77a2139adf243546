import test from "ava";
import { parse as parseCsv } from "csv-parse/sync";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { GetStatementResponseSchema, type GetStatementRequest } from "@payments/contracts/payout";
import { startFakeApp, type FakeApp } from "./fake-app.js";
import { signedCall } from "./http-client.js";

/*
 * GET /v1/statement's `timeZone`: with an IANA name the period is that zone's days (Türkiye's
 * midnights for Europe/Istanbul), the answer names the zone, movement times stay UTC instants;
 * without it nothing changes (whole UTC days, no timeZone in the answer); a zone Intl does not
 * know is 400 VALIDATION_ERROR and nothing is asked of the payout service. Over a fake payout
 * service that records what it is asked; every answer is held to the OpenAPI document (call).
 */

const merchant = { merchantId: "mer_zone", apiKey: "key_zone", apiSecret: "secret_zone" };
const asked: GetStatementRequest[] = [];
/** A deposit credited at 22:30 on 30 November in UTC: 01:30 on 1 December in Türkiye. */
const LATE_EVENING_UTC = Date.parse("2026-11-30T22:30:00.000Z");

let app: FakeApp;
test.before(async () => {
  app = await startFakeApp({
    merchants: [merchant],
    payouts: {
      getStatement: (req) => {
        asked.push(req);
        return create(GetStatementResponseSchema, {
          currency: "TRY",
          opening: { available: 10_000n, held: 0n },
          lines: [{ entryId: "led_1", createdAt: timestampFromMs(LATE_EVENING_UTC), kind: "deposit_credit", availableDelta: 5_000n, heldDelta: 0n, balanceAfter: 15_000n, transactionId: "dep_1", processId: "order-1" }],
          closing: { available: 15_000n, held: 0n },
        });
      },
    },
  });
  app.clock.set(new Date("2027-01-05T09:00:00.000Z"));
});
test.after.always(() => app.close());

const get = (path: string) => signedCall(app.url, merchant, app.clock, { path });
const range = (req: GetStatementRequest) => [new Date(Number(req.fromMs)).toISOString(), new Date(Number(req.toMs)).toISOString()];

test.serial("without timeZone the statement is whole UTC days exactly as before, and names no zone", async (t) => {
  asked.length = 0;
  const reply = await get("/v1/statement?from=2026-12-01&to=2026-12-31");
  t.is(reply.status, 200, reply.text);
  t.deepEqual(asked.map(range), [["2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]]);
  t.deepEqual(Object.keys(reply.json.data!), ["currency", "from", "to", "openingBalance", "closingBalance", "movements"]);
  // An empty timeZone is no timeZone.
  asked.length = 0;
  const empty = await get("/v1/statement?from=2026-12-01&to=2026-12-31&timeZone=");
  t.is(empty.status, 200, empty.text);
  t.deepEqual(asked.map(range), [["2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]]);
  t.false("timeZone" in empty.json.data!);
});

test.serial("timeZone=Europe/Istanbul: the period runs from Türkiye's midnight to Türkiye's midnight, the answer names the zone, times stay UTC instants", async (t) => {
  asked.length = 0;
  const reply = await get("/v1/statement?from=2026-12-01&to=2026-12-31&timeZone=Europe/Istanbul");
  t.is(reply.status, 200, reply.text);
  t.deepEqual(asked.map(range), [["2026-11-30T21:00:00.000Z", "2026-12-31T21:00:00.000Z"]]);
  const data = reply.json.data as { from: string; to: string; timeZone: string; movements: Array<{ at: string }> };
  t.deepEqual(Object.keys(data), ["currency", "from", "to", "timeZone", "openingBalance", "closingBalance", "movements"]);
  t.like(data, { from: "2026-12-01", to: "2026-12-31", timeZone: "Europe/Istanbul" });
  t.deepEqual(data.movements.map((m) => m.at), ["2026-11-30T22:30:00.000Z"]);

  // Any spelling Intl knows is answered canonically; a one-day statement is one Turkish day.
  asked.length = 0;
  const lower = await get("/v1/statement?from=2026-12-01&to=2026-12-01&timeZone=europe%2Fistanbul");
  t.is(lower.status, 200, lower.text);
  t.is((lower.json.data as { timeZone: string }).timeZone, "Europe/Istanbul");
  t.deepEqual(asked.map(range), [["2026-11-30T21:00:00.000Z", "2026-12-01T21:00:00.000Z"]]);
});

test.serial("the CSV of a zone's statement opens and closes at the zone's midnights, as UTC instants", async (t) => {
  const reply = await get("/v1/statement?from=2026-12-01&to=2026-12-31&timeZone=Europe/Istanbul&format=csv");
  t.is(reply.status, 200, reply.text);
  const rows: string[][] = parseCsv(reply.text, { bom: true });
  t.deepEqual(rows.map((row) => [row[0], row[1]]).slice(1), [
    ["2026-11-30T21:00:00.000Z", "opening_balance"],
    ["2026-11-30T22:30:00.000Z", "deposit_credit"],
    ["2026-12-31T21:00:00.000Z", "closing_balance"],
  ]);
});

test.serial("a zone Intl does not know, an offset, or a zone given twice is 400 VALIDATION_ERROR on timeZone, and the service is not asked", async (t) => {
  asked.length = 0;
  for (const [zone, message] of [
    ["Mars/Olympus_Mons", /^timeZone: must be an IANA time zone name, e.g\. Europe\/Istanbul or UTC \(not an offset such as \+03:00\)$/],
    ["%2B03:00", /^timeZone: must be an IANA time zone name/],
    ["UTC%2B3", /^timeZone: must be an IANA time zone name/],
    ["Europe/Istanbul&timeZone=UTC", /^timeZone: must be given only once$/],
  ] as const) {
    const reply = await get(`/v1/statement?from=2026-12-01&to=2026-12-31&timeZone=${zone}`);
    t.is(reply.status, 400, zone);
    t.is(reply.json.success, false);
    t.is(reply.json.error?.code, "VALIDATION_ERROR", zone);
    t.regex(reply.json.error?.message ?? "", message, zone);
  }
  // Every problem in one answer: a bad date and a bad zone together.
  const both = await get("/v1/statement?from=soon&to=2026-12-31&timeZone=Nowhere");
  t.regex(both.json.error?.message ?? "", /^from: must be a date.*; timeZone: must be an IANA time zone name/);
  t.is(asked.length, 0);
});

test.serial("366 days in a zone whose clocks go back inside them exceed what the payout service takes: 400 on to, with what to do", async (t) => {
  asked.length = 0;
  const reply = await get("/v1/statement?from=2023-03-27&to=2024-03-26&timeZone=Europe/Berlin");
  t.is(reply.status, 400);
  t.is(reply.json.error?.code, "VALIDATION_ERROR");
  t.regex(reply.json.error?.message ?? "", /^to: must be at most 366 × 24 hours after from's start in Europe\/Berlin \(the clocks go back in this range\): end it a day earlier$/);
  t.is(asked.length, 0);
  t.is((await get("/v1/statement?from=2023-03-27&to=2024-03-26")).status, 200, "as UTC days it is a year like any");
});
