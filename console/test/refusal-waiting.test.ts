import test from "ava";
import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import { text } from "../src/operator/texts/index.js";
import { refusalOf } from "../src/operator/operator-call.js";

// A request that waited already (the services answer the waiting approval, naming its maker):
// the page says so and whose it is, rather than that this ask now waits.

test("APPROVAL_REQUIRED for a request that waited already names who asked; a new one says it waits", (t) => {
  const en = (key: Parameters<typeof text>[1], params?: Record<string, string | number>) => text("en", key, params);
  const tr = (key: Parameters<typeof text>[1], params?: Record<string, string | number>) => text("tr", key, params);
  const again = serviceError(Code.FailedPrecondition, "APPROVAL_REQUIRED", "this already waits", { details: { approvalId: "apr_1", alreadyWaiting: "true", maker: "ali@example.com" } });
  t.like(refusalOf(again, en), { status: 202, approvalId: "apr_1", message: "This already waits for a second operator: ali@example.com asked for it (approval apr_1)." });
  t.is(refusalOf(again, tr).message, "Bu zaten ikinci bir operatörü bekliyor: ali@example.com istedi (onay apr_1).");
  const fresh = serviceError(Code.FailedPrecondition, "APPROVAL_REQUIRED", "a second operator must approve this", { details: { approvalId: "apr_2" } });
  t.is(refusalOf(fresh, en).message, "Waiting for a second operator (approval apr_2).");
});
