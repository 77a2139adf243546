import test from "ava";
import { Code, ConnectError } from "@connectrpc/connect";
import { serviceError, validationError } from "@payments/kit";
import { ApiError, callService, mapServiceError, publicFieldName, validationFailure } from "../src/errors.js";
import { DEPOSIT_FIELDS } from "../src/routes/deposits.js";

/* The error mapping the deposit routes rely on: field renaming, INVALID_TRANSACTION_STATE, the VALIDATION_ERROR message format. */

const fields = DEPOSIT_FIELDS;

test("a service VALIDATION_ERROR names the merchant's JSON field, prefix and all", (t) => {
  const cases: Array<[string, string, string]> = [
    ["process_id", "process_id: must be at most 50 characters", "processId: must be at most 50 characters"],
    ["bank_id", 'bank_id: "x" is not one of this merchant\'s available banks', 'bankCode: "x" is not one of this merchant\'s available banks'],
    ["metadata_json", "metadata_json: must be a JSON object", "metadata: must be a JSON object"],
    ["customer.name", "customer.name: is required", "customer.name: is required"],
    ["currency", "currency: must be one of TRY", "currency: must be one of TRY"],
    ["amount", "amount: must be a positive integer", "amount: must be a positive integer"],
  ];
  for (const [field, message, expected] of cases) {
    const err = mapServiceError(validationError(field, message), { fields });
    t.like(err, { status: 400, code: "VALIDATION_ERROR", message: expected }, field);
  }
});

test("a message without the field prefix gets the JSON name in front; unmapped fields stay as they are", (t) => {
  t.is(mapServiceError(validationError("bank_id", "unknown bank"), { fields }).message, "bankCode: unknown bank");
  t.is(mapServiceError(validationError("cursor", "cursor: is not a cursor"), { fields }).message, "cursor: is not a cursor");
  t.is(publicFieldName("customer.username", fields), "customer.username");
  t.is(publicFieldName("merchant_id", fields), "merchant_id");
  // Without a map the mapping is as before.
  t.is(mapServiceError(validationError("process_id", "process_id: is required")).message, "process_id: is required");
});

test("INVALID_TRANSACTION_STATE is 409 with its details", (t) => {
  const err = mapServiceError(
    serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", "the deposit is completed; only a pending deposit can be cancelled", { details: { status: "completed" } }),
  );
  t.like(err, { status: 409, code: "INVALID_TRANSACTION_STATE", message: "the deposit is completed; only a pending deposit can be cancelled" });
  t.deepEqual(err.details, { status: "completed" });
});

test("a VALIDATION_ERROR of the gateway lists every problem as field: problem joined by '; '", (t) => {
  t.like(
    validationFailure([
      { field: "processId", problem: "is required" },
      { field: "amount", problem: "is required" },
    ]),
    { status: 400, code: "VALIDATION_ERROR", message: "processId: is required; amount: is required" },
  );
});

test("callService maps merchant-facing failures with the route's names and leaves server failures to the error handler", async (t) => {
  const mapped = await t.throwsAsync(callService(Promise.reject(validationError("process_id", "process_id: is required")), { fields }));
  t.true(mapped instanceof ApiError);
  t.is(mapped.message, "processId: is required");

  const internal = new ConnectError("SELECT * FROM deposits failed", Code.Internal);
  t.is(await t.throwsAsync(callService(Promise.reject(internal), { fields })), internal);
  const crash = new TypeError("x is undefined");
  t.is(await t.throwsAsync(callService(Promise.reject(crash), { fields })), crash);
  const own = new ApiError(404, "TRANSACTION_NOT_FOUND", "no deposit");
  t.is(await t.throwsAsync(callService(Promise.reject(own), { fields })), own);
  t.is(await callService(Promise.resolve(7)), 7);
});
