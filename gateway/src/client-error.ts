import type { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { newId, type Clock, type Logger } from "@payments/kit";
import { failure } from "./envelope.js";

/** How Node's own refusals of a request are answered: its status and reason phrase, the public code and message. */
interface Refusal {
  status: number;
  reason: string;
  code: string;
  message: string;
}

/** Node's error codes for a request its HTTP parser or timers refuse, mapped like Node's own default answers, in the envelope. */
export function refusalOf(code: string | undefined): Refusal {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, reason: "Request Header Fields Too Large", code: "HEADERS_TOO_LARGE", message: "The request headers are too large" };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, reason: "Payload Too Large", code: "PAYLOAD_TOO_LARGE", message: "The chunk extensions of the request body are too large" };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, reason: "Request Timeout", code: "REQUEST_TIMEOUT", message: "The request was not received completely in time" };
    default:
      return { status: 400, reason: "Bad Request", code: "VALIDATION_ERROR", message: "request: is not a well-formed HTTP/1.1 request" };
  }
}

type ClientError = Error & { code?: string };

/** The response in flight on this socket, if Koa has one. Node keeps it there, undocumented; its own default handler reads it too. */
function inFlightResponse(socket: Duplex): ServerResponse | undefined {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
}

/** How long a refused client gets to take the answer before the socket is destroyed anyway. */
const LINGER_MS = 1_000;

/**
 * The `clientError` listener of the gateway's HTTP server: a request Node refuses before (or
 * while) Koa sees it (malformed, too slow, headers too large). Without a listener Node answers
 * a bare status line, and the error reaches Koa's error event carrying `rawPacket`: the raw
 * request bytes, API key, signature and body included. Here the error itself is never logged,
 * only its code, on one short line; the client gets the failure envelope with an
 * X-Request-Id when the socket is still writable and no response has started on it; then
 * the socket is destroyed.
 */
export function answerClientError(options: { clock: Clock; logger: Logger }): (err: ClientError, socket: Duplex) => void {
  return (err, socket) => {
    // A parser in error reports every later chunk again; the first report settled it.
    if (socket.destroyed || socket.writableEnded) {
      socket.destroy();
      return;
    }
    const peer = socket instanceof Socket ? socket.remoteAddress : undefined;
    if (err.code === "ECONNRESET" || !socket.writable) {
      options.logger.debug({ code: err.code, peer }, "client connection failed");
      socket.destroy();
      return;
    }
    const refusal = refusalOf(err.code);
    const inFlight = inFlightResponse(socket);
    // A request Koa is already handling (its body was malformed) keeps the id its log lines have.
    const started = inFlight?.getHeader("X-Request-Id");
    const requestId = typeof started === "string" ? started : newId("req");
    options.logger.info({ requestId, status: refusal.status, code: err.code, peer }, "request refused by the HTTP parser");
    if (inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    answerAndClose(socket, refusal, requestId, options.clock);
  };
}

/** Writes the refusal in the envelope on the raw socket, then destroys it (at the latest after LINGER_MS). */
function answerAndClose(socket: Duplex, refusal: Refusal, requestId: string, clock: Clock, extraHeaders: string[] = []): void {
  const body = JSON.stringify(failure(refusal.code, refusal.message, clock));
  const head = [
    `HTTP/1.1 ${refusal.status} ${refusal.reason}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...extraHeaders,
    "Connection: close",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * The `connect` listener of the gateway's HTTP server. Node hands a CONNECT request to this
 * event instead of the app, and without a listener closes the socket without a word; the
 * gateway is no proxy, so the answer is the 405 any other unserved method gets, in the
 * envelope, with the methods the gateway serves at all in Allow (which ones a path takes is
 * the router's to say, and it never sees a CONNECT).
 */
export function answerConnect(options: { clock: Clock; logger: Logger }): (req: IncomingMessage, socket: Duplex) => void {
  return (_req, socket) => {
    const requestId = newId("req");
    const peer = socket instanceof Socket ? socket.remoteAddress : undefined;
    options.logger.info({ requestId, status: 405, method: "CONNECT", peer }, "CONNECT refused");
    if (socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    const refusal = { status: 405, reason: "Method Not Allowed", code: "METHOD_NOT_ALLOWED", message: "CONNECT is not allowed here: the gateway is not a proxy" };
    answerAndClose(socket, refusal, requestId, options.clock, ["Allow: GET, HEAD, POST"]);
  };
}
