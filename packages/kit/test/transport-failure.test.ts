import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import test from "ava";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health } from "@payments/contracts/health";
import { createServiceClient, errorInfo, serviceError, transportFailureAsUnavailable } from "../src/index.js";

// A call whose connection breaks under it (the HTTP/2 stream reset, the session closed) never
// reached a service's decision: the caller gets UNAVAILABLE (the gateway's 503), never the
// INTERNAL that Connect gives it (a 500). Real HTTP/2 servers that break each call.

async function breakingServer(breakIt: (stream: http2.ServerHttp2Stream, session: http2.Http2Session) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = http2.createServer();
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  server.on("stream", (stream) => {
    // The server's own side of the break is expected: only the client's view is under test.
    stream.on("error", () => undefined);
    stream.session?.on("error", () => undefined);
    breakIt(stream, stream.session!);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // The client keeps its connection for reuse: the server does not wait for it.
        for (const session of sessions) session.destroy();
      }),
  };
}

for (const [what, breakIt] of [
  ["a stream reset with INTERNAL_ERROR", (stream: http2.ServerHttp2Stream) => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR)],
  ["a GOAWAY with INTERNAL_ERROR (the session closed with error code 2)", (_: http2.ServerHttp2Stream, session: http2.Http2Session) => session.goaway(http2.constants.NGHTTP2_INTERNAL_ERROR)],
  ["a session destroyed by the server", (_: http2.ServerHttp2Stream, session: http2.Http2Session) => session.destroy(undefined, http2.constants.NGHTTP2_INTERNAL_ERROR)],
] as const) {
  test(`${what} under a call is UNAVAILABLE for the caller`, async (t) => {
    const server = await breakingServer(breakIt);
    try {
      const client = createServiceClient(Health, server.url, { timeoutMs: 5_000 });
      const err = await t.throwsAsync(client.check({ service: "" }));
      t.is(errorInfo(err).code, Code.Unavailable, String(err));
      t.regex(errorInfo(err).message, /the connection to the service broke/);
    } finally {
      await server.close();
    }
  });
}

test("a service's own INTERNAL answer (no transport fault) and its deliberate errors are left as they are", (t) => {
  const internal = new ConnectError("internal error", Code.Internal);
  t.is(transportFailureAsUnavailable(internal), internal);
  const deliberate = serviceError(Code.Internal, "SOME_REASON", "http/2 stream closed with error code INTERNAL_ERROR (0x2)");
  t.is(transportFailureAsUnavailable(deliberate), deliberate);
  const reset = new ConnectError("http/2 stream closed with error code INTERNAL_ERROR (0x2)", Code.Internal);
  t.is(transportFailureAsUnavailable(reset).code, Code.Unavailable);
  const givenUp = new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled);
  t.is(transportFailureAsUnavailable(givenUp, true), givenUp, "the caller's own cancel stays a cancel");
});
