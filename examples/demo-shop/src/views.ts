import { formatAmount, PRODUCTS } from "./catalog.js";
import type { Order, OrderStatus } from "./orders.js";

/** Server-rendered HTML: the demo shows the payment flow, so the pages stay plain. */

/** A bank as the shop shows it: the fields of GET /v1/available-banks it uses. */
export interface BankView {
  _id: string;
  name: string;
  minAmount: number;
  maxAmount: number;
  logo?: string;
}

export const STATUS_LABELS: Record<OrderStatus, string> = {
  new: "Creating payment…",
  pending: "Awaiting payment",
  completed: "Paid",
  failed: "Payment failed",
  expired: "Expired",
  cancelled: "Cancelled",
};

export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Demo Shop</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 56rem; padding: 1rem; color: #222; }
  header a { color: inherit; text-decoration: none; }
  .products { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; }
  .product, .card { border: 1px solid #ddd; border-radius: .5rem; padding: 1rem; }
  .banks { display: flex; flex-wrap: wrap; gap: .5rem; padding: 0; list-style: none; }
  .banks label { display: flex; align-items: center; gap: .4rem; border: 1px solid #ddd; border-radius: .4rem; padding: .3rem .6rem; }
  .banks img { width: 24px; height: 24px; }
  .status { font-weight: 600; padding: .1rem .5rem; border-radius: .3rem; background: #eee; }
  [data-status="completed"] .status { background: #d4f5dc; }
  [data-status="failed"] .status, [data-status="expired"] .status, [data-status="cancelled"] .status { background: #fbdada; }
  .error { color: #a00; }
  button, .button { font: inherit; padding: .4rem .9rem; cursor: pointer; }
  table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .3rem; border-bottom: 1px solid #eee; }
</style></head>
<body><header><h1><a href="/">Demo Shop</a></h1><p>A sandbox merchant of the payment gateway: nothing here is real money.</p></header>
${body}</body></html>`;
}

export function shopPage(input: { banks: BankView[]; banksError?: string; orders: Order[]; error?: string }): string {
  const banks = input.banks.length
    ? `<ul class="banks">
  <li><label><input type="radio" name="bankCode" value="" form="buy" checked> Any bank</label></li>
${input.banks
  .map(
    (b) => `  <li><label title="${esc(formatAmount(b.minAmount))} – ${esc(formatAmount(b.maxAmount))}"><input type="radio" name="bankCode" value="${esc(b._id)}" form="buy">
    ${b.logo ? `<img src="${esc(b.logo)}" alt="">` : ""}<span class="bank-name">${esc(b.name)}</span></label></li>`,
  )
  .join("\n")}
</ul>`
    : `<p class="error">No banks available${input.banksError ? `: ${esc(input.banksError)}` : ""}.</p>`;
  const products = PRODUCTS.map(
    (p) => `<div class="product" data-product="${esc(p.id)}"><h3>${esc(p.name)}</h3><p>${esc(p.description)}</p>
  <p><strong>${esc(formatAmount(p.price))}</strong></p>
  <button type="submit" form="buy" name="productId" value="${esc(p.id)}">Buy</button></div>`,
  ).join("\n");
  const orders = input.orders.length
    ? `<table id="orders"><tr><th>Order</th><th>Product</th><th>Amount</th><th>Status</th></tr>
${input.orders
  .map(
    (o) =>
      `<tr data-status="${esc(o.status)}"><td><a href="/orders/${esc(o.id)}">${esc(o.id)}</a></td><td>${esc(o.product.name)}</td><td>${esc(formatAmount(o.amount, o.currency))}</td><td><span class="status">${esc(STATUS_LABELS[o.status])}</span></td></tr>`,
  )
  .join("\n")}</table>`
    : "<p>No orders yet.</p>";
  return layout(
    "Shop",
    `${input.error ? `<p class="error" id="error">${esc(input.error)}</p>` : ""}
<form id="buy" method="post" action="/orders">
  <fieldset><legend>Your details</legend>
    <label>Name <input name="name" value="Ayşe Yılmaz" required></label>
    <label>Username <input name="username" value="ayse" required></label>
  </fieldset>
</form>
<h2>Pay from</h2>
${banks}
<h2>Products</h2>
<div class="products">${products}</div>
<h2>Orders</h2>
${orders}`,
  );
}

/** The order's status in the shape the order page polls. */
export function orderJson(order: Order) {
  return {
    id: order.id,
    status: order.status,
    label: STATUS_LABELS[order.status],
    sequence: order.sequence,
    transactionId: order.transactionId ?? null,
    checkoutUrl: order.status === "pending" ? (order.checkoutUrl ?? null) : null,
    error: order.error ?? null,
  };
}

export function orderPage(order: Order, notice?: string): string {
  const open = order.status === "pending";
  return layout(
    `Order ${order.id}`,
    `<section class="card" id="order" data-status="${esc(order.status)}" data-order="${esc(order.id)}">
  <h2>Order ${esc(order.id)}</h2>
  <p>${esc(order.product.name)}: <strong>${esc(formatAmount(order.amount, order.currency))}</strong></p>
  <p>Status: <span class="status" id="order-status">${esc(STATUS_LABELS[order.status])}</span></p>
  ${order.transactionId ? `<p>Transaction: <code>${esc(order.transactionId)}</code></p>` : ""}
  ${order.error ? `<p class="error" id="error">${esc(order.error)}</p>` : ""}
  ${notice ? `<p class="error" id="notice">${esc(notice)}</p>` : ""}
  <div id="actions" ${open ? "" : "hidden"}>
    ${order.checkoutUrl ? `<a class="button" id="checkout-link" href="${esc(order.checkoutUrl)}">Pay at checkout</a>` : ""}
    <form method="post" action="/orders/${esc(order.id)}/simulate" style="display:inline">
      <button type="submit" id="simulate">Simulate payment (sandbox)</button>
    </form>
  </div>
  <p><small>The status changes when the gateway's signed callback arrives; this page asks the shop every second.</small></p>
</section>
<p><a href="/">Back to the shop</a></p>
<script>
  // Live status: poll the shop (not the gateway: the browser never holds the API secret).
  const section = document.getElementById("order");
  async function refresh() {
    try {
      const res = await fetch("/orders/" + encodeURIComponent(section.dataset.order) + "/status", { cache: "no-store" });
      if (res.ok) {
        const order = await res.json();
        section.dataset.status = order.status;
        document.getElementById("order-status").textContent = order.label;
        document.getElementById("actions").hidden = order.status !== "pending";
        if (order.status !== "pending" && order.status !== "new") return;
      }
    } catch {}
    setTimeout(refresh, 1000);
  }
  setTimeout(refresh, 1000);
</script>`,
  );
}
