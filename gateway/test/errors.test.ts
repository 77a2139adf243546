import test from "ava";
import { Code, ConnectError } from "@connectrpc/connect";
import { serviceError, validationError } from "@payments/kit";
import { ApiError, callAboutPathId, INTERNAL_MESSAGE, mapServiceError, publicReasons } from "../src/errors.js";
import { EVENT_FIELDS } from "../src/routes/events.js";

test("VALIDATION_ERROR becomes 400 VALIDATION_ERROR whose message names the field", (t) => {
  const err = mapServiceError(validationError("amount", "must be a positive integer"));
  t.is(err.status, 400);
  t.is(err.code, "VALIDATION_ERROR");
  t.regex(err.message, /amount/);
  t.is(mapServiceError(validationError("processId", "processId is required")).message, "processId is required");
});

test("public reasons pass through with their status, message and details", (t) => {
  const expected: Record<string, number> = {
    DUPLICATE_TRANSACTION: 400,
    AMOUNT_OUT_OF_RANGE: 400,
    INVALID_IBAN: 400,
    INSUFFICIENT_BALANCE: 400,
    BANK_UNAVAILABLE: 400,
    TRANSACTION_NOT_FOUND: 404,
    INVALID_TRANSACTION_STATE: 409,
    MERCHANT_MODE_CHANGING: 409,
    SANDBOX_ONLY: 403,
    EVENT_NOT_FOUND: 404,
  };
  t.deepEqual({ ...publicReasons }, expected);
  const err = mapServiceError(
    serviceError(Code.AlreadyExists, "DUPLICATE_TRANSACTION", "processId p1 already used", { details: { transactionId: "dep_abc" } }),
  );
  t.like(err, { status: 400, code: "DUPLICATE_TRANSACTION", message: "processId p1 already used" });
  t.deepEqual(err.details, { transactionId: "dep_abc" });
  t.like(mapServiceError(serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", "no such transaction")), { status: 404, code: "TRANSACTION_NOT_FOUND" });
});

test("an unreachable service is 503 SERVICE_UNAVAILABLE", (t) => {
  t.like(mapServiceError(new ConnectError("connect ECONNREFUSED 127.0.0.1:9", Code.Unavailable)), { status: 503, code: "SERVICE_UNAVAILABLE" });
});

test("a call over its deadline is 504 UPSTREAM_TIMEOUT", (t) => {
  t.like(mapServiceError(new ConnectError("deadline", Code.DeadlineExceeded)), { status: 504, code: "UPSTREAM_TIMEOUT" });
});

test("anything else is 500 INTERNAL_ERROR with a generic message that leaks nothing", (t) => {
  const cases = [
    new ConnectError("ER_DUP_ENTRY: Duplicate entry 'x' for key 'PRIMARY' at Query.sequence (/app/node_modules/mysql2)", Code.Internal),
    serviceError(Code.NotFound, "MERCHANT_NOT_FOUND", "merchant m_1 not found"),
    serviceError(Code.Unauthenticated, "UNAUTHENTICATED", "missing or invalid internal API token"),
    new Error("SELECT * FROM secrets"),
    "a thrown string",
  ];
  for (const thrown of cases) {
    const err = mapServiceError(thrown);
    t.true(err instanceof ApiError);
    t.like(err, { status: 500, code: "INTERNAL_ERROR", message: INTERNAL_MESSAGE });
    t.is(err.details, undefined);
  }
});

test("a reason that only looks like a table entry is not passed through", (t) => {
  t.like(mapServiceError(serviceError(Code.Internal, "toString", "x")), { status: 500, code: "INTERNAL_ERROR" });
  t.like(mapServiceError(serviceError(Code.Internal, "__proto__", "x")), { status: 500, code: "INTERNAL_ERROR" });
});

test("EVENT_NOT_FOUND is a public 404; the callback service's fields come back under the query's names", (t) => {
  t.like(mapServiceError(serviceError(Code.NotFound, "EVENT_NOT_FOUND", "event evt_1 not found")), { status: 404, code: "EVENT_NOT_FOUND", message: "event evt_1 not found" });
  t.is(mapServiceError(validationError("delivery_status", "delivery_status: is not a delivery status"), { fields: EVENT_FIELDS }).message, "deliveryStatus: is not a delivery status");
  t.is(mapServiceError(validationError("transaction_id", "transaction_id: must be at most 40 characters"), { fields: EVENT_FIELDS }).message, "transactionId: must be at most 40 characters");
});

test("callAboutPathId: an id the service cannot parse is the resource's 404; other failures map as usual", async (t) => {
  const notFound = () => new ApiError(404, "EVENT_NOT_FOUND", "no event with this id");
  const options = { fields: EVENT_FIELDS, idField: "event_id", notFound };
  t.like(await t.throwsAsync(callAboutPathId(Promise.reject(validationError("event_id", "event_id: must be at most 40 characters")), options)), { status: 404, code: "EVENT_NOT_FOUND" });
  t.like(await t.throwsAsync(callAboutPathId(Promise.reject(validationError("cursor", "cursor: is not a cursor")), options)), { status: 400, code: "VALIDATION_ERROR" });
  const down = new ConnectError("connect ECONNREFUSED", Code.Unavailable);
  // Left to the error handler (503), which logs the original.
  t.is(await t.throwsAsync(callAboutPathId(Promise.reject(down), options)), down);
  t.is(await callAboutPathId(Promise.resolve("ok"), options), "ok");
});
