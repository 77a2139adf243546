import type { Client } from "@connectrpc/connect";
import type { Deposit, DepositService } from "@payments/contracts/deposit";
import { errorInfo, type Clock } from "@payments/kit";
import { basePathOf, checkoutSecurityHeaders, newNonce, renderCheckoutPage, renderInvalidLinkPage, renderUnavailablePage } from "../checkout/page.js";
import { chooseLanguage } from "../checkout/texts.js";
import { checkoutOrder, checkoutView } from "../checkout/view.js";
import { success } from "../envelope.js";
import { ApiError, mapServiceError } from "../errors.js";
import type { RouteContext } from "../state.js";
import type { Route } from "./route.js";

type CheckoutClient = Pick<Client<typeof DepositService>, "getCheckout" | "simulatePayment">;

/**
 * Anything that could be a token; the service decides whether it is one. The check only
 * keeps junk (arrays, kilobytes of text) away from the service and out of the page.
 */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{1,128}$/;

const NOT_FOUND_MESSAGE = "This payment link is not valid or has expired";

/** The deposit service's reasons the checkout JSON answers with, and their HTTP status; anything else goes through mapServiceError. */
const CHECKOUT_REASONS: Readonly<Record<string, number>> = {
  CHECKOUT_NOT_FOUND: 404,
  SANDBOX_ONLY: 403,
  INVALID_TRANSACTION_STATE: 409,
  NO_ASSIGNED_ACCOUNT: 409,
};

function tokenOf(ctx: RouteContext): string | undefined {
  const token = ctx.query.token;
  return typeof token === "string" && TOKEN_SHAPE.test(token) ? token : undefined;
}

function notFound(): ApiError {
  return new ApiError(404, "CHECKOUT_NOT_FOUND", NOT_FOUND_MESSAGE);
}

/** A checkout reason becomes its own public error; any other error is rethrown as is, for the error handler's one mapper. */
function checkoutError(err: unknown): unknown {
  const info = errorInfo(err);
  if (info.reason === "CHECKOUT_NOT_FOUND") return notFound();
  if (info.reason !== undefined && Object.hasOwn(CHECKOUT_REASONS, info.reason)) {
    return new ApiError(CHECKOUT_REASONS[info.reason]!, info.reason, info.message, info.details);
  }
  return err;
}

function depositOf(res: { deposit?: Deposit }): Deposit {
  if (!res.deposit) throw new Error("the deposit service answered without a deposit");
  return res.deposit;
}

/**
 * The customer's checkout: GET /checkout (the HTML page), GET /checkout/status (what the
 * page polls) and POST /checkout/simulate (sandbox merchants only). Whom the customer pays,
 * the order and the way back are in the page only; the JSON carries what changes. Public: the token in
 * the query string is the only credential, so every answer carries no-store, no-referrer
 * and a CSP that allows nothing but this page's own nonce'd script and style.
 */
export function checkout(deps: { deposits: CheckoutClient; clock: Clock; publicBaseUrl: string }): Route[] {
  const basePath = basePathOf(deps.publicBaseUrl);

  return [
    {
      method: "GET",
      path: "/checkout",
      access: "public",
      handler: async (ctx) => {
        const lang = chooseLanguage(ctx.query.lang, ctx.get("Accept-Language") || undefined);
        const nonce = newNonce();
        ctx.set(checkoutSecurityHeaders(nonce));
        ctx.set("Vary", "Accept-Language");
        ctx.set("Content-Language", lang);
        ctx.type = "text/html; charset=utf-8";

        const token = tokenOf(ctx);
        if (!token) {
          ctx.status = 404;
          ctx.body = renderInvalidLinkPage({ lang, nonce });
          return;
        }
        let res;
        try {
          res = await deps.deposits.getCheckout({ token });
        } catch (err) {
          if (errorInfo(err).reason === "CHECKOUT_NOT_FOUND") {
            ctx.status = 404;
            ctx.body = renderInvalidLinkPage({ lang, nonce, token });
            return;
          }
          // A customer gets a page to reload, not a JSON envelope; the failure still reaches the log.
          const mapped = mapServiceError(err);
          ctx.status = mapped.status >= 500 ? mapped.status : 500;
          ctx.body = renderUnavailablePage({ lang, nonce, token });
          ctx.app.emit("error", err, ctx);
          return;
        }
        const deposit = depositOf(res);
        const view = checkoutView(deposit, res.sandbox, deps.clock.now());
        const order = checkoutOrder(deposit, res.merchantDisplayName);
        ctx.status = 200;
        ctx.body = renderCheckoutPage({ view, order, token, lang, nonce, basePath });
      },
    },
    {
      method: "GET",
      path: "/checkout/status",
      access: "public",
      handler: async (ctx) => {
        ctx.set(checkoutSecurityHeaders());
        const token = tokenOf(ctx);
        if (!token) throw notFound();
        let res;
        try {
          res = await deps.deposits.getCheckout({ token });
        } catch (err) {
          throw checkoutError(err);
        }
        ctx.body = success(checkoutView(depositOf(res), res.sandbox, deps.clock.now()), deps.clock);
      },
    },
    {
      method: "POST",
      path: "/checkout/simulate",
      access: "public",
      handler: async (ctx) => {
        ctx.set(checkoutSecurityHeaders());
        const token = tokenOf(ctx);
        if (!token) throw notFound();
        let res;
        try {
          res = await deps.deposits.simulatePayment({ token });
        } catch (err) {
          throw checkoutError(err);
        }
        // Only a sandbox merchant's deposit can have been simulated.
        ctx.body = success(checkoutView(depositOf(res), true, deps.clock.now()), deps.clock);
      },
    },
  ];
}
