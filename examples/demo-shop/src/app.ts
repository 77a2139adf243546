import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import Koa, { type Context } from "koa";
import Router from "@koa/router";
import { PaymentsClient, PaymentsError, type Bank } from "@payments/sdk";
import { callbackHandler } from "./callbacks.js";
import { productById } from "./catalog.js";
import type { DemoConfig } from "./config.js";
import { createMerchant, loadCredentials, updateCallbackUrl, type MerchantCredentials } from "./merchant.js";
import { OrderStore, type Order } from "./orders.js";
import { orderJson, orderPage, shopPage } from "./views.js";

export const CALLBACK_PATH = "/payments/callback";

export interface DemoShop {
  /** Where the shop answers, e.g. http://127.0.0.1:3000. */
  url: string;
  callbackUrl: string;
  credentials: MerchantCredentials;
  stop(): Promise<void>;
}

/**
 * Starts the shop: listens first (so that with DEMO_PORT=0 the callback URL has the real
 * port), then makes sure it has a sandbox merchant whose callback URL is this shop's.
 */
export async function startDemoShop(config: DemoConfig, log: (line: string) => void = (line) => console.log(line)): Promise<DemoShop> {
  const store = new OrderStore(config.dataDir);
  let client: PaymentsClient | undefined;
  let credentials: MerchantCredentials | undefined;
  let callbackUrl = "";
  const app = new Koa();
  const router = routes({
    store,
    client: () => client!,
    callback: callbackHandler({ store, secret: () => credentials!.apiSecret, signedPath: () => pathOf(callbackUrl), log }),
  });
  app.use(async (ctx, next) => {
    // Nothing answers before the merchant is known (a callback could not be verified yet).
    if (!client) ctx.throw(503, "the shop is starting");
    await next();
  });
  app.use(router.routes()).use(router.allowedMethods());

  const server = await listen(app, config);
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${(server.address() as AddressInfo).port}`;
  try {
    callbackUrl = `${config.publicUrl ?? url}${CALLBACK_PATH}`;
    ({ client, credentials } = await ensureMerchant(config, callbackUrl, log));
  } catch (err) {
    await close(server);
    throw err;
  }
  return { url, callbackUrl, credentials, stop: () => close(server) };
}

/**
 * The stored merchant when it still works against this gateway, else a new one. A gateway
 * whose data was reset no longer knows the stored API key (INVALID_API_KEY): then the shop
 * simply becomes a new merchant, as a fresh install would.
 */
async function ensureMerchant(config: DemoConfig, callbackUrl: string, log: (line: string) => void): Promise<{ client: PaymentsClient; credentials: MerchantCredentials }> {
  const connect = (c: MerchantCredentials) => new PaymentsClient({ baseUrl: config.gatewayUrl, apiKey: c.apiKey, apiSecret: c.apiSecret });
  let credentials = loadCredentials(config.dataDir);
  if (credentials && credentials.gatewayUrl === config.gatewayUrl) {
    try {
      await connect(credentials).availableBanks();
      if (credentials.callbackUrl !== callbackUrl) {
        credentials = await updateCallbackUrl(config.dataDir, credentials, callbackUrl);
        log(`callback URL of ${credentials.merchantId} is now ${callbackUrl}`);
      }
      return { client: connect(credentials), credentials };
    } catch (err) {
      if (!(err instanceof PaymentsError && err.code === "INVALID_API_KEY")) throw err;
      log(`the gateway no longer knows merchant ${credentials.merchantId} (its data was reset?): creating a new one`);
    }
  }
  credentials = await createMerchant(config.dataDir, config.gatewayUrl, callbackUrl);
  log(`created sandbox merchant ${credentials.merchantId}; credentials in ${config.dataDir}/merchant.json`);
  return { client: connect(credentials), credentials };
}

function routes(deps: { store: OrderStore; client: () => PaymentsClient; callback: (ctx: Context) => Promise<void> }): Router {
  const { store } = deps;
  const router = new Router();
  /** The bank list changes rarely: the API advises caching it; a few minutes keeps the demo responsive to operator changes. */
  let banks: { at: number; list: Bank[] } | undefined;

  router.get("/", async (ctx) => {
    let banksError: string | undefined;
    if (!banks || Date.now() - banks.at > 5 * 60_000) {
      try {
        banks = { at: Date.now(), list: (await deps.client().availableBanks()).banks };
      } catch (err) {
        banksError = describe(err);
      }
    }
    ctx.type = "html";
    ctx.body = shopPage({ banks: banks?.list ?? [], banksError, orders: store.list(), error: stringOf(ctx.query.error) });
  });

  router.post("/orders", async (ctx) => {
    const form = new URLSearchParams((await readBody(ctx)).toString("utf8"));
    const product = productById(form.get("productId") ?? "");
    if (!product) {
      ctx.status = 303;
      return ctx.redirect(`/?error=${encodeURIComponent("Choose a product")}`);
    }
    const username = (form.get("username") || "guest").trim().slice(0, 40);
    const bankCode = form.get("bankCode") || undefined;
    const order = store.save({
      id: OrderStore.newId(),
      product: { id: product.id, name: product.name },
      amount: product.price,
      currency: "TRY",
      ...(bankCode ? { bankCode } : {}),
      customer: { id: `cus_${username}`, name: (form.get("name") || "Guest").trim().slice(0, 100), username },
      status: "new",
      sequence: 0,
      eventIds: [],
      createdAt: new Date().toISOString(),
      updatedAt: "",
    } satisfies Order);
    try {
      const deposit = await deps.client().createDeposit({
        processId: order.id,
        amount: order.amount,
        currency: order.currency,
        ...(bankCode ? { bankCode } : {}),
        customer: order.customer,
        metadata: { productId: product.id },
        // The checkout page's "back to the shop" link: this order's page, at the address the
        // customer's browser reached the shop on (a sandbox merchant may use http).
        returnUrl: `${ctx.origin}/orders/${order.id}`,
      });
      order.transactionId = deposit.transactionId;
      order.checkoutUrl = deposit.checkoutUrl;
      // A callback may already have moved it on (a very quick customer); never step back.
      if (order.status === "new") order.status = "pending";
      store.save(order);
    } catch (err) {
      order.status = "failed";
      order.error = `The payment could not be started: ${describe(err)}`;
      store.save(order);
      ctx.status = 303;
      return ctx.redirect(`/orders/${order.id}`);
    }
    // 303: the browser follows with a GET, to the gateway's hosted checkout page.
    ctx.status = 303;
    ctx.redirect(order.checkoutUrl);
  });

  router.get("/orders/:id/status", (ctx) => {
    const order = orderOf(ctx, store);
    ctx.set("Cache-Control", "no-store");
    ctx.body = orderJson(order);
  });

  router.get("/orders/:id", (ctx) => {
    const order = orderOf(ctx, store);
    ctx.type = "html";
    ctx.body = orderPage(order, stringOf(ctx.query.notice));
  });

  /** Sandbox only: the gateway pays the deposit as if the customer's transfer had arrived; the order still changes only by the callback. */
  router.post("/orders/:id/simulate", async (ctx) => {
    const order = orderOf(ctx, store);
    let notice = "";
    if (!order.transactionId) notice = "This order has no payment to simulate.";
    else {
      try {
        await deps.client().sandbox.payDeposit(order.transactionId);
      } catch (err) {
        notice = `Simulation refused: ${describe(err)}`;
      }
    }
    ctx.status = 303;
    ctx.redirect(`/orders/${order.id}${notice ? `?notice=${encodeURIComponent(notice)}` : ""}`);
  });

  router.post(CALLBACK_PATH, deps.callback);
  return router;
}

/** The order named in the path, or a 404. */
function orderOf(ctx: Context & { params: Record<string, string | undefined> }, store: OrderStore): Order {
  const order = store.get(ctx.params.id ?? "");
  if (!order) {
    ctx.status = 404;
    throw Object.assign(new Error("no such order"), { status: 404, expose: true });
  }
  return order;
}

function describe(err: unknown): string {
  if (err instanceof PaymentsError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

async function readBody(ctx: Context, limit = 64 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) ctx.throw(413, "form too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function listen(app: Koa, config: DemoConfig): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(config.port, config.host);
    server.once("listening", () => resolve(server));
    server.once("error", reject);
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
