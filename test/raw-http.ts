import net from "node:net";

/*
 * HTTP/1.1 written byte by byte over a plain TCP socket: node:http and undici refuse to send
 * what the edge fuzzing needs to send (CR, LF or NUL in a header, raw bytes above 0x7F in the
 * request target, odd methods, duplicate Content-Type), so the request is serialised here and
 * the answer read back with a small parser of its own. Every request says Connection: close,
 * so an answer ends when the gateway closes the socket.
 */

/** A request exactly as it goes on the wire. Header values and the target may be raw bytes. */
export interface WireRequest {
  method: string;
  /** The request target (path and query) as sent; a Buffer for bytes that are not UTF-8. */
  target: string | Buffer;
  /** In order, duplicates kept. `Host` and `Connection: close` are added unless present. */
  headers?: Array<[string, string | Buffer]>;
  body?: Buffer;
  /**
   * How the body is framed: "length" (the default) adds a Content-Length of the body's size
   * unless a header already names one; "chunked" sends it as one chunk with
   * Transfer-Encoding: chunked; "none" adds neither (the headers say what they say).
   */
  framing?: "length" | "chunked" | "none";
}

export interface WireAnswer {
  /** 0 when the connection failed before a status line arrived. */
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The body as UTF-8 text. */
  text: string;
  /** Set when the socket failed (before or after an answer). */
  connectionError?: string;
}

const CRLF = "\r\n";

/** The request's bytes: request line, headers, blank line, framed body. */
export function serialise(req: WireRequest, host: string): Buffer {
  const headers = [...(req.headers ?? [])];
  const has = (name: string) => headers.some(([n]) => n.toLowerCase() === name);
  if (!has("host")) headers.unshift(["Host", host]);
  if (!has("connection")) headers.push(["Connection", "close"]);
  const framing = req.framing ?? "length";
  let body = req.body ?? Buffer.alloc(0);
  if (framing === "length" && !has("content-length") && (body.length > 0 || req.method === "POST" || req.method === "PUT" || req.method === "PATCH")) {
    headers.push(["Content-Length", String(body.length)]);
  }
  if (framing === "chunked") {
    headers.push(["Transfer-Encoding", "chunked"]);
    body = Buffer.concat([body.length > 0 ? Buffer.from(`${body.length.toString(16)}${CRLF}`) : Buffer.alloc(0), body, Buffer.from(body.length > 0 ? `${CRLF}0${CRLF}${CRLF}` : `0${CRLF}${CRLF}`)]);
  }
  const parts: Buffer[] = [Buffer.from(`${req.method} `, "latin1"), typeof req.target === "string" ? Buffer.from(req.target, "utf8") : req.target, Buffer.from(` HTTP/1.1${CRLF}`)];
  for (const [name, value] of headers) {
    parts.push(Buffer.from(`${name}:`, "latin1"), typeof value === "string" ? Buffer.from(value, "utf8") : value, Buffer.from(CRLF));
  }
  parts.push(Buffer.from(CRLF), body);
  return Buffer.concat(parts);
}

/** Decodes a chunked body; what cannot be decoded is returned as it came. */
function unchunk(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf(CRLF, at);
    if (eol < 0) return raw;
    const size = Number.parseInt(raw.subarray(at, eol).toString("latin1").split(";")[0]!, 16);
    if (!Number.isFinite(size)) return raw;
    if (size === 0) return Buffer.concat(out);
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** Parses one HTTP/1.1 answer from the bytes read until the server closed the socket. */
export function parseAnswer(whole: Buffer, method: string): WireAnswer {
  // Interim answers (100 Continue to an Expect header) come first: the final one follows.
  let raw = whole;
  while (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 13).toString("latin1"))) {
    const interimEnd = raw.indexOf(`${CRLF}${CRLF}`);
    if (interimEnd < 0) break;
    raw = raw.subarray(interimEnd + 4);
  }
  const end = raw.indexOf(`${CRLF}${CRLF}`);
  const head = (end < 0 ? raw : raw.subarray(0, end)).toString("latin1").split(CRLF);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "")?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = end < 0 || method === "HEAD" ? Buffer.alloc(0) : raw.subarray(end + 4);
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) body = unchunk(body);
  else if (headers["content-length"] !== undefined) body = body.subarray(0, Number(headers["content-length"]));
  return { status, headers, body, text: body.toString("utf8") };
}

/**
 * Sends the request to `baseUrl` (http://host:port) and reads the answer to the end. A socket
 * error after the answer arrived (the gateway closing on a body it would not read) is kept in
 * `connectionError` next to the answer; one before any answer leaves status 0.
 */
export function sendRaw(baseUrl: string, req: WireRequest, timeoutMs = 20_000): Promise<WireAnswer> {
  const url = new URL(baseUrl);
  const bytes = serialise(req, url.host);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let settled = false;
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const answer = parseAnswer(Buffer.concat(chunks), req.method);
      resolve(error === undefined ? answer : { ...answer, connectionError: error });
    };
    const timer = setTimeout(() => {
      error = `no answer within ${timeoutMs} ms`;
      finish();
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
      // An answer may still be in flight on a socket whose write side failed (EPIPE): give it a moment.
      setTimeout(finish, 50);
    });
    socket.on("close", finish);
    socket.on("end", () => socket.end());
    socket.write(bytes);
  });
}
