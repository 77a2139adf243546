import test from "ava";
import { Code } from "@connectrpc/connect";
import { z } from "zod";
import { amountFilter, errorInfo, filterText, ibanFilter, parseRequest } from "../src/index.js";

// parseRequest is every service's one way from a request message to validated values: the first
// problem is VALIDATION_ERROR whose field is the proto field path and whose message starts with
// "<field>: ", the prefix the gateway replaces with the merchant's own field name.

function refusal(schema: z.ZodType, request: unknown) {
  try {
    parseRequest(schema, request);
  } catch (err) {
    return errorInfo(err);
  }
  throw new Error("the request was accepted");
}

test("valid input comes back as the schema's output", (t) => {
  const schema = z.object({ merchantId: z.string().min(1), amount: z.bigint().transform((v) => Number(v)) });
  t.deepEqual(parseRequest(schema, { merchantId: "mer_1", amount: 5n }), { merchantId: "mer_1", amount: 5 });
});

test("a refused field is named by its proto name, in the field and at the start of the message", (t) => {
  const schema = z.object({ merchantId: z.string(), gracePeriodSeconds: z.number().max(10, "must be at most 10") });
  t.like(refusal(schema, { merchantId: "m", gracePeriodSeconds: 11 }), {
    code: Code.InvalidArgument,
    reason: "VALIDATION_ERROR",
    field: "grace_period_seconds",
    message: "grace_period_seconds: must be at most 10",
  });
});

test("a field of a nested message is named by its dotted path; list positions are left out of the name", (t) => {
  const nested = z.object({ limit: z.object({ minAmount: z.number().min(1, "must be positive") }) });
  t.like(refusal(nested, { limit: { minAmount: 0 } }), { field: "limit.min_amount", message: "limit.min_amount: must be positive" });
  const listed = z.object({ credits: z.array(z.object({ depositId: z.string().min(1, "is required") })) });
  t.like(refusal(listed, { credits: [{ depositId: "d" }, { depositId: "" }] }), { field: "credits.deposit_id", message: "credits.deposit_id: is required" });
});

test("a problem of the request as a whole is named request", (t) => {
  const schema = z.object({ a: z.string(), b: z.string() }).refine((v) => v.a !== v.b, "a and b must differ");
  t.like(refusal(schema, { a: "x", b: "x" }), { field: "request", message: "request: a and b must differ" });
});

test("only the first problem is reported", (t) => {
  const schema = z.object({ name: z.string().min(1, "is required"), code: z.string().min(1, "is required") });
  t.like(refusal(schema, { name: "", code: "" }), { field: "name", message: "name: is required" });
});

test("a list's filter fields: empty means no filter, an IBAN in any spacing and case is kept electronic, an amount is positive", (t) => {
  const schema = z.object({ iban: ibanFilter, holderName: filterText(10), amount: amountFilter });
  t.deepEqual(parseRequest(schema, { iban: "", holderName: "", amount: undefined }), { iban: "", holderName: "", amount: undefined });
  t.deepEqual(parseRequest(schema, { iban: "tr33 0006 1005 1978 6457 8413 26", holderName: " Elif", amount: 250n }), { iban: "TR330006100519786457841326", holderName: " Elif", amount: 250 });
  t.like(refusal(schema, { iban: "TR33 0006", holderName: "", amount: undefined }), { reason: "VALIDATION_ERROR", field: "iban" });
  t.like(refusal(schema, { iban: "", holderName: "x".repeat(11), amount: undefined }), { reason: "VALIDATION_ERROR", field: "holder_name" });
  t.like(refusal(schema, { iban: "", holderName: "", amount: 0n }), { reason: "VALIDATION_ERROR", field: "amount" });
});
