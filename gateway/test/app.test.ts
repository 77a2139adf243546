import http from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import { Code, ConnectError, createClient, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";
import { DepositService } from "@payments/contracts/deposit";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CallbackService } from "@payments/contracts/callback";
import { Health, HealthCheckResponse_ServingStatus } from "@payments/contracts/health";
import { MerchantService, MerchantStatus } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { createLogger, createMetrics, serviceError } from "@payments/kit";
import { manualClock } from "@payments/testing";
import { createApp } from "../src/app.js";
import { loadGatewayConfig } from "../src/config.js";
import { CredentialCache } from "../src/credential-cache.js";
import { INTERNAL_MESSAGE } from "../src/errors.js";
import { signedCall } from "./http-client.js";

/*
 * The app over in-memory fakes of the services (createRouterTransport): failures the real
 * services do not produce on demand.
 */

const credentials = { apiKey: "pk_test", apiSecret: "sk_test" };

async function startApp(catalog: Partial<ServiceImpl<typeof BankCatalogService>>, env: Record<string, string> = {}) {
  const clock = manualClock();
  const logLines: string[] = [];
  const merchantsTransport = createRouterTransport(({ service }) => {
    service(MerchantService, {
      getCredentials: (req) => {
        if (req.apiKey !== credentials.apiKey) throw serviceError(Code.NotFound, "API_KEY_NOT_FOUND", "unknown");
        return { merchantId: "m_1", status: MerchantStatus.ACTIVE, secrets: [{ secret: credentials.apiSecret }] };
      },
    });
    service(Health, { check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }) });
  });
  const catalogTransport = createRouterTransport(({ service }) => {
    service(BankCatalogService, catalog);
    service(Health, { check: () => ({ status: HealthCheckResponse_ServingStatus.NOT_SERVING }) });
  });
  const merchants = createClient(MerchantService, merchantsTransport);
  const app = createApp({
    config: loadGatewayConfig({ PORT: "0", ...env }),
    merchants,
    bankCatalog: createClient(BankCatalogService, catalogTransport),
    deposits: createClient(DepositService, catalogTransport),
    payouts: createClient(PayoutService, catalogTransport),
    callbacks: createClient(CallbackService, catalogTransport),
    health: { merchant: createClient(Health, merchantsTransport), "bank-catalog": createClient(Health, catalogTransport) },
    credentials: new CredentialCache({ merchants, clock, ttlMs: 30_000, negativeTtlMs: 5_000 }),
    logger: createLogger({ service: "gateway", level: "info", destination: { write: (line: string) => void logLines.push(line) } }),
    metrics: createMetrics(),
    clock,
  });
  const handle = app.callback();
  // Fire-and-forget is safe: Koa catches every error of a request itself (the error handler answers
  // with the envelope), so the promise never rejects.
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, clock, logLines, close: () => new Promise((resolve) => server.close(resolve)) };
}

test("a crash is 500 INTERNAL_ERROR with a generic message; the details go to the log with the stack", async (t) => {
  const app = await startApp({
    listAvailableBanks: () => {
      throw new ConnectError("ER_NO_SUCH_TABLE: Table 'banks' doesn't exist SELECT * FROM banks", Code.Internal);
    },
  });
  const reply = await signedCall(app.url, credentials, app.clock, { path: "/v1/available-banks" });
  t.is(reply.status, 500);
  t.deepEqual(reply.json.error, { code: "INTERNAL_ERROR", message: INTERNAL_MESSAGE });
  t.false(reply.text.includes("SELECT"));
  t.true(app.logLines.some((line) => line.includes("ER_NO_SUCH_TABLE") && line.includes(String(reply.headers["x-request-id"]))));
  await app.close();
});

test("an amount a JSON number cannot hold is a 500, never a rounded number", async (t) => {
  const app = await startApp({
    listAvailableBanks: () => ({ banks: [{ id: "b1", name: "Bank", code: "0001", logoUrl: "", minAmount: 1n, maxAmount: 2n ** 60n }] }),
  });
  const reply = await signedCall(app.url, credentials, app.clock, { path: "/v1/available-banks" });
  t.is(reply.status, 500);
  t.is(reply.json.error?.code, "INTERNAL_ERROR");
  t.true(app.logLines.some((line) => line.includes("cannot be sent as a JSON number") && line.includes('"stack"')));
  await app.close();
});

test("a slow service is 504 UPSTREAM_TIMEOUT and an unavailable one 503 SERVICE_UNAVAILABLE", async (t) => {
  const slow = await startApp({
    listAvailableBanks: () => {
      throw new ConnectError("deadline exceeded", Code.DeadlineExceeded);
    },
  });
  const timedOut = await signedCall(slow.url, credentials, slow.clock, { path: "/v1/available-banks" });
  t.is(timedOut.status, 504);
  t.is(timedOut.json.error?.code, "UPSTREAM_TIMEOUT");
  await slow.close();

  const down = await startApp({
    listAvailableBanks: () => {
      throw new ConnectError("connect ECONNREFUSED", Code.Unavailable);
    },
  });
  const unavailable = await signedCall(down.url, credentials, down.clock, { path: "/v1/available-banks" });
  t.is(unavailable.status, 503);
  t.is(unavailable.json.error?.code, "SERVICE_UNAVAILABLE");
  t.false(unavailable.text.includes("ECONNREFUSED"));
  await down.close();
});

test("the catalog never produces a second FAST entry, and logos are absolute", async (t) => {
  const app = await startApp(
    {
      listAvailableBanks: () => ({
        banks: [
          { id: "FAST", name: "Fake FAST", code: "FAST", logoUrl: "/x.svg", minAmount: 1n, maxAmount: 2n },
          { id: "b1", name: "Bank", code: "0001", logoUrl: "/assets/banks/0001.svg", minAmount: 100n, maxAmount: 200n },
        ],
        fast: { minAmount: 5n, maxAmount: 6n },
      }),
    },
    { PUBLIC_BASE_URL: "https://gw.example/" },
  );
  const reply = await signedCall(app.url, credentials, app.clock, { path: "/v1/available-banks" });
  t.deepEqual(reply.json.data, {
    banks: [
      { _id: "b1", name: "Bank", code: "0001", minAmount: 100, maxAmount: 200, logo: "https://gw.example/assets/banks/0001.svg" },
      { _id: "FAST", name: "FAST", code: "FAST", minAmount: 5, maxAmount: 6 },
    ],
  });
  await app.close();
});

test("/healthz names the service that is not serving", async (t) => {
  const app = await startApp({});
  const reply = await signedCall(app.url, credentials, app.clock, { path: "/healthz" });
  t.is(reply.status, 503);
  t.deepEqual(reply.json.error?.details, { merchant: "SERVING", "bank-catalog": "NOT_SERVING" });
  await app.close();
});

test("paths are case-sensitive", async (t) => {
  const app = await startApp({});
  const reply = await signedCall(app.url, credentials, app.clock, { path: "/V1/AVAILABLE-BANKS" });
  t.is(reply.status, 404);
  await app.close();
});
