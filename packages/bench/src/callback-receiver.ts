import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The merchants' callback endpoint, as its own process (so the bench's own work does not
 * delay the arrival times): answers 200 to every POST and notes, per callback, the event
 * id, its type, the transaction id, the body's `createdAt` (when the status changed) and
 * the arrival time. The parent (IPC) asks for what arrived with "take".
 */

/** [eventId, type, transactionId, createdAt ms, arrived ms] */
export type Arrival = [string, string, string, number, number];

let arrivals: Arrival[] = [];
let malformed = 0;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const arrived = Date.now();
    res.writeHead(200).end();
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: string; type?: string; createdAt?: string; data?: { transactionId?: string } };
      arrivals.push([body.id ?? "", body.type ?? "", body.data?.transactionId ?? "", Date.parse(body.createdAt ?? ""), arrived]);
    } catch {
      malformed++;
    }
  });
});
server.keepAliveTimeout = 30_000;

server.listen(0, "127.0.0.1", () => {
  process.send?.({ ready: true, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench/callbacks` });
});

process.on("message", (message: { take?: boolean }) => {
  if (message.take) {
    process.send?.({ arrivals, malformed });
    arrivals = [];
    malformed = 0;
  }
});

process.on("disconnect", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
process.once("SIGTERM", () => process.exit(0));
process.once("SIGINT", () => process.exit(0));
