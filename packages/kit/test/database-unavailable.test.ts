import test from "ava";
import { isDatabaseUnavailable } from "../src/index.js";

// Which failures mean "the database cannot be reached now" (UNAVAILABLE, the gateway's 503)
// rather than a bug (INTERNAL, 500). The end-to-end proof is test/database-readiness.e2e.test.ts.

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

test("connection failures of mysql2 and the socket are the database being unavailable", (t) => {
  for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "PROTOCOL_CONNECTION_LOST", "ER_SERVER_SHUTDOWN", "ER_CON_COUNT_ERROR", "ER_CONNECTION_KILLED"]) {
    t.true(isDatabaseUnavailable(coded(code)), code);
  }
  t.true(isDatabaseUnavailable(Object.assign(new Error("Knex: Timeout acquiring a connection. The pool is probably full."), { name: "KnexTimeoutError" })), "the pool could not hand out a connection");
  t.true(isDatabaseUnavailable(new Error("query failed", { cause: coded("PROTOCOL_CONNECTION_LOST") })), "wrapped as a cause");
  t.true(
    isDatabaseUnavailable(Object.assign(new Error("ROLLBACK - Can't add new command when connection is in closed state"), { fatal: true })),
    "mysql2's fatal errors: the connection closed under a transaction (a database restart, seen in the chaos run)",
  );
});

test("a refusal of the statement, a conflict or a plain bug is not", (t) => {
  for (const code of ["ER_DUP_ENTRY", "ER_LOCK_DEADLOCK", "ER_BAD_FIELD_ERROR", "ER_PARSE_ERROR", "SQLITE_CONSTRAINT"]) {
    t.false(isDatabaseUnavailable(coded(code)), code);
  }
  t.false(isDatabaseUnavailable(new TypeError("x is undefined")));
  t.false(isDatabaseUnavailable(undefined));
  t.false(isDatabaseUnavailable("ECONNREFUSED"));
});
