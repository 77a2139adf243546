import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { Duplex } from "node:stream";
import test from "ava";
import { createLogger } from "@payments/kit";
import { manualClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { answerClientError, answerConnect } from "../src/client-error.js";
import { startGateway, type RunningGateway } from "../src/server.js";
import { startFakeApp } from "./fake-app.js";

/*
 * Requests Node's HTTP parser or timers refuse (malformed, headers too large, too slow): the
 * client gets the failure envelope, and the logs get one short line without the request's
 * bytes. Sent over raw TCP, since no HTTP client would send them.
 */

const API_KEY = "pk_live_5ecret_api_key_0123456789";
const SIGNATURE = "a".repeat(63) + "f";
/** 30 KB the log must never see. */
const BODY = `{"processId":"${"SECRETBODY".repeat(3000)}"}`;

interface RawReply {
  text: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
}

/** Writes bytes to the server and collects what comes back until it closes the socket (or `waitMs` passes). */
function rawExchange(port: number, chunks: Array<string | Buffer>, waitMs = 5_000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(received).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ text, status: Number(statusLine.split(" ")[1]), headers, body, closed });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, waitMs);
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      // The server may reset a socket it refused while our bytes were still arriving.
      if (err.code !== "ECONNRESET" && err.code !== "EPIPE") reject(err);
    });
    socket.on("close", () => {
      closed = true;
      finish();
    });
    socket.on("connect", () => {
      for (const chunk of chunks) socket.write(chunk);
    });
  });
}

function envelopeOf(t: { is(a: unknown, b: unknown, m?: string): void; truthy(a: unknown, m?: string): void }, reply: RawReply, status: number, code: string) {
  t.is(reply.status, status, reply.text.slice(0, 500));
  t.is(reply.headers["content-type"], "application/json; charset=utf-8");
  t.is(reply.headers.connection, "close");
  t.truthy(/^[A-Za-z0-9._:-]+$/.test(reply.headers["x-request-id"] ?? ""), "X-Request-Id");
  const json = JSON.parse(reply.body) as { success: boolean; error: { code: string; message: string }; timestamp: number };
  t.is(json.success, false);
  t.is(json.error.code, code);
  t.truthy(json.error.message);
  t.is(Buffer.byteLength(reply.body), Number(reply.headers["content-length"]));
  return json;
}

/** Every line short, none with the credentials or the body, none at error level. */
function logsAreClean(t: { true(a: boolean, m?: string): void; false(a: boolean, m?: string): void }, lines: readonly string[]): void {
  for (const line of lines) {
    t.true(line.length < 1_000, `a ${line.length}-character log line: ${line.slice(0, 300)}`);
    t.false(line.includes(API_KEY), `the API key was logged: ${line.slice(0, 300)}`);
    t.false(line.includes(SIGNATURE), `the signature was logged: ${line.slice(0, 300)}`);
    t.false(line.includes("SECRETBODY"), `the body was logged: ${line.slice(0, 300)}`);
    t.false(line.includes("rawPacket"), `raw bytes were logged: ${line.slice(0, 300)}`);
    t.false(line.includes('"level":"error"'), `an error-level line: ${line.slice(0, 300)}`);
  }
}

const clock = manualClock();
const logLines: string[] = [];
let gateway: RunningGateway | undefined;

test.before(async () => {
  // The real server wiring (startGateway). Nothing here reaches a service, so none runs.
  const nowhere = "http://127.0.0.1:9";
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "debug" },
    logger: createLogger({ service: "test", level: "debug", destination: { write: (line: string) => void logLines.push(line) } }),
    clock,
    merchantUrl: nowhere,
    bankCatalogUrl: nowhere,
    depositUrl: nowhere,
    payoutUrl: nowhere,
    callbackUrl: nowhere,
  });
});

test.after.always(async () => {
  await gateway?.stop();
});

const port = () => {
  if (!gateway) throw new Error("the gateway did not start");
  return gateway.port;
};

/** Log lines written from now on, once the server has had a moment to finish the request. */
async function linesDuring(action: () => Promise<RawReply>): Promise<{ reply: RawReply; lines: string[] }> {
  const from = logLines.length;
  const reply = await action();
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { reply, lines: logLines.slice(from) };
}

test.serial("a malformed chunked body with an API key, a signature and 30 KB: a JSON 400, the socket closed, and short log lines without key, signature or body", async (t) => {
  const { reply, lines } = await linesDuring(() =>
    rawExchange(port(), [
      "POST /v1/deposit HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n" +
        `X-API-Key: ${API_KEY}\r\nX-Timestamp: 1795341600\r\nX-Signature: ${SIGNATURE}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      // A valid first chunk, then a chunk size that is not hex, then the 30 KB.
      `5\r\n{"a":\r\nZZZ\r\n${BODY}\r\n`,
    ]),
  );
  const json = envelopeOf(t, reply, 400, "VALIDATION_ERROR");
  t.is(json.timestamp, Math.floor(clock.now().getTime() / 1000));
  t.true(reply.closed, "the socket is closed");
  logsAreClean(t, lines);
  const refusal = lines.find((line) => line.includes("request refused by the HTTP parser"));
  t.truthy(refusal, lines.join(""));
  t.true(refusal?.includes(`"requestId":"${reply.headers["x-request-id"]}"`), "the log line has the id the client got");
  t.true(refusal?.includes('"code":"HPE_INVALID_CHUNK_SIZE"'));
});

test.serial("a malformed header line is a JSON 400 before any request starts, logged as one short line without its bytes", async (t) => {
  const { reply, lines } = await linesDuring(() =>
    rawExchange(port(), [`GET /v1/available-banks HTTP/1.1\r\nHost: gateway\r\nX-API-Key: ${API_KEY}\r\nX-Signature: ${SIGNATURE}\r\nthis is not a header\r\n\r\n`]),
  );
  envelopeOf(t, reply, 400, "VALIDATION_ERROR");
  t.true(reply.closed);
  logsAreClean(t, lines);
  t.is(lines.length, 1, lines.join(""));
});

test.serial("headers over Node's limit are a JSON 431 HEADERS_TOO_LARGE", async (t) => {
  const { reply, lines } = await linesDuring(() =>
    rawExchange(port(), [`GET /v1/available-banks HTTP/1.1\r\nHost: gateway\r\nX-API-Key: ${API_KEY}\r\nX-Padding: ${"SECRETBODY".repeat(2_000)}\r\n\r\n`]),
  );
  envelopeOf(t, reply, 431, "HEADERS_TOO_LARGE");
  t.true(reply.closed);
  logsAreClean(t, lines);
});

test.serial("a well-formed request on the same server is unaffected", async (t) => {
  const reply = await rawExchange(port(), ["GET /nothing HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n"]);
  t.is(reply.status, 404);
  t.is((JSON.parse(reply.body) as { error: { code: string } }).error.code, "NOT_FOUND");
});

test("a request whose headers do not arrive in time is a JSON 408 REQUEST_TIMEOUT", async (t) => {
  const lines: string[] = [];
  const server = http.createServer({ headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 }, (_req, res) => res.end());
  server.on("clientError", answerClientError({ clock, logger: createLogger({ service: "test", destination: { write: (line: string) => void lines.push(line) } }) }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const reply = await rawExchange((server.address() as AddressInfo).port, [`GET / HTTP/1.1\r\nHost: gateway\r\nX-API-Key: ${API_KEY}\r\n`]);
  envelopeOf(t, reply, 408, "REQUEST_TIMEOUT");
  t.true(reply.closed);
  logsAreClean(t, lines);
});

/** A socket stand-in that records what is written to it. */
class RecordingSocket extends Duplex {
  written = "";
  _httpMessage: { headersSent: boolean; getHeader(name: string): string | undefined } | null = null;
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.written += chunk.toString("utf8");
    callback();
  }
}

test("once a response has started on the socket nothing more is written, and the socket is destroyed", (t) => {
  const lines: string[] = [];
  const handler = answerClientError({ clock, logger: createLogger({ service: "test", destination: { write: (line: string) => void lines.push(line) } }) });
  const socket = new RecordingSocket();
  socket._httpMessage = { headersSent: true, getHeader: (name) => (name.toLowerCase() === "x-request-id" ? "req_started" : undefined) };
  handler(Object.assign(new Error("Parse Error"), { code: "HPE_INVALID_METHOD", rawPacket: Buffer.from(API_KEY) }), socket);
  t.is(socket.written, "");
  t.true(socket.destroyed);
  t.is(lines.length, 1);
  t.true(lines[0]!.includes('"requestId":"req_started"'), "the line has the id of the request in flight");
  logsAreClean(t, lines);
});

test("a client that reset the connection gets nothing and costs one debug line", (t) => {
  const lines: string[] = [];
  const handler = answerClientError({ clock, logger: createLogger({ service: "test", level: "debug", destination: { write: (line: string) => void lines.push(line) } }) });
  const socket = new RecordingSocket();
  handler(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), socket);
  t.is(socket.written, "");
  t.true(socket.destroyed);
  t.is(lines.length, 1);
  t.true(lines[0]!.includes('"level":"debug"'));
});

test("an app served without the clientError listener still never logs the raw request (Koa's error event)", async (t) => {
  const app = await startFakeApp();
  t.teardown(app.close);
  const from = app.logLines.length;
  await rawExchange(Number(new URL(app.url).port), [
    `POST /v1/deposit HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nX-API-Key: ${API_KEY}\r\nX-Signature: ${SIGNATURE}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    `5\r\n{"a":\r\nZZZ\r\n${BODY}\r\n`,
  ]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const lines = app.logLines.slice(from);
  t.true(lines.length > 0);
  logsAreClean(t, lines);
});

/*
 * Two kinds of request Node keeps from the app unless the server listens for them, found by
 * the edge fuzzing (test/edge-fuzz.e2e.test.ts): CONNECT (the `connect` event; unheard, Node
 * closes the socket without a word) and an Expect other than 100-continue (the
 * `checkExpectation` event; unheard, Node answers a bare 417 without the envelope or an
 * X-Request-Id). server.ts listens for both: answerConnect answers the first; the second goes
 * to the app like any other request (RFC 9110 lets a server ignore an expectation it does not
 * know). The last two tests hold the real server to both.
 */

const CONNECT_REQUEST = `CONNECT /v1/deposit HTTP/1.1\r\nHost: gateway\r\nX-API-Key: ${API_KEY}\r\nX-Signature: ${SIGNATURE}\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

test("answerConnect: a CONNECT with credentials and a body is a JSON 405 METHOD_NOT_ALLOWED with Allow, the socket closed, one short log line without the request's bytes", async (t) => {
  const lines: string[] = [];
  const logger = createLogger({ service: "test", destination: { write: (line: string) => void lines.push(line) } });
  const server = http.createServer((_req, res) => res.end());
  server.on("connect", answerConnect({ clock, logger }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const reply = await rawExchange((server.address() as AddressInfo).port, [CONNECT_REQUEST]);
  const json = envelopeOf(t, reply, 405, "METHOD_NOT_ALLOWED");
  t.is(json.timestamp, Math.floor(clock.now().getTime() / 1000));
  t.is(reply.headers.allow, "GET, HEAD, POST");
  t.true(reply.closed);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(lines.length, 1, lines.join(""));
  t.true(lines[0]!.includes(`"requestId":"${reply.headers["x-request-id"]}"`), "the log line has the id the client got");
  logsAreClean(t, lines);
});

test.serial("the gateway's server answers CONNECT with the envelope", async (t) => {
  const reply = await rawExchange(port(), [CONNECT_REQUEST]);
  envelopeOf(t, reply, 405, "METHOD_NOT_ALLOWED");
});

test.serial("the gateway's server hands a request with an unknown Expect to the app like any other", async (t) => {
  const reply = await rawExchange(port(), ["GET /nothing HTTP/1.1\r\nHost: gateway\r\nExpect: something-else\r\nConnection: close\r\n\r\n"]);
  envelopeOf(t, reply, 404, "NOT_FOUND");
});
