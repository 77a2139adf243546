import test from "ava";
import { createLogger, SECRET_HEADERS } from "@payments/kit";

/*
 * The kit logger censors credentials in headers wherever the code logs them (a request's
 * headers, an error's, a response's inside an error), in every spelling, and never writes
 * Node's rawPacket (the raw request bytes) or rawHeaders.
 */

function capture() {
  const lines: string[] = [];
  const logger = createLogger({ service: "test", level: "debug", destination: { write: (line: string) => void lines.push(line) } });
  return { logger, text: () => lines.join("") };
}

const SECRET = "s3cr3t-value";

test("X-API-Key, X-Signature and Authorization are censored under headers at any logged path, in any spelling code uses", (t) => {
  const { logger, text } = capture();
  t.deepEqual([...SECRET_HEADERS], ["X-API-Key", "X-Signature", "Authorization"]);
  const spellings = ["x-api-key", "X-API-Key", "X-API-KEY", "X-Api-Key", "x-signature", "X-Signature", "X-SIGNATURE", "authorization", "Authorization", "AUTHORIZATION"];
  for (const name of spellings) {
    const headers = { [name]: SECRET, host: "gateway.example" };
    logger.info({ headers }, "top level");
    logger.info({ req: { method: "POST", headers } }, "one down");
    logger.warn({ err: { response: { headers } } }, "two down");
    logger.debug({ context: { call: { request: { headers } } } }, "three down");
    logger.error({ err: Object.assign(new Error("boom"), { headers, request: { headers } }) }, "an error's own headers");
    logger.error(Object.assign(new Error("boom"), { headers }), "an error as the object");
    const child = logger.child({ component: "child" });
    child.info({ req: { headers } }, "a child logger");
  }
  const output = text();
  t.false(output.includes(SECRET), output.split("\n").find((line) => line.includes(SECRET)));
  t.true(output.includes("[REDACTED]"));
  t.true(output.includes("gateway.example"), "other headers are kept");
});

test("Node's rawPacket and rawHeaders never reach a log line, on an error or beside one", (t) => {
  const { logger, text } = capture();
  const packet = Buffer.from(`POST / HTTP/1.1\r\nX-API-Key: ${SECRET}\r\n\r\n${"body".repeat(5_000)}`);
  const parseError = Object.assign(new Error("Parse Error: Invalid character in chunk size"), { code: "HPE_INVALID_CHUNK_SIZE", rawPacket: packet });
  logger.error({ err: parseError }, "as err");
  logger.error(parseError, "as the object");
  logger.info({ req: { rawHeaders: ["X-API-Key", SECRET] } }, "raw headers");
  const output = text();
  t.false(output.includes(SECRET));
  t.false(output.includes("bodybody"));
  t.true(output.length < 3_000, `${output.length} characters`);
  t.true(output.includes("HPE_INVALID_CHUNK_SIZE"), "the error itself is still there");
});
