/**
 * The "Getting started" at the top of the API reference: the OpenAPI document puts it in
 * `info.description`, so Scalar shows it above the operations. Markdown (CommonMark with
 * tables). A developer follows it in a quarter of an hour: sandbox merchant, signed
 * request, deposit, sandbox payment, verified callback.
 */
export const GETTING_STARTED = `## Getting started

Fifteen minutes from nothing to a paid test deposit and a verified callback, on your own machine. Every call below goes to the gateway at \`http://localhost:8080\` (\`pnpm start\`); in production use the base URL you were given.

### 1. Create a sandbox merchant

Start the gateway so it may call back to \`localhost\`, then create a merchant with a callback URL:

\`\`\`sh
CALLBACK_ALLOW_PRIVATE=1 pnpm start        # in one terminal; prints a line containing "ready"
pnpm cli merchant create --name "My Shop" --display-name "Örnek Mağaza" --callback-url http://localhost:3000/payments/callback --sandbox --json
# {"merchantId":"mer_…","apiKey":"pk_…","apiSecret":"sk_…","webhookSecret":"whsec_…"}
\`\`\`

Store the three secrets now: they are shown only once. \`--display-name\` is whom your customers see they pay on the checkout page (without it, \`--name\`). A **sandbox** merchant deals in test money only: its deposits are assigned made-up sandbox accounts and can be paid with the test helper below; it never touches a live account.

### 2. Sign a request

Every request carries three headers:

| Header | Value |
|---|---|
| \`X-API-Key\` | your API key, \`pk_…\` |
| \`X-Timestamp\` | Unix time in seconds, as a string; it must be within 5 minutes of the server's clock |
| \`X-Signature\` | lower-case hex HMAC-SHA256, keyed with your API secret, of \`timestamp + METHOD + path-with-query + body\` |

\`body\` is the exact JSON text you send (the empty string for a GET); sign the bytes you send, not a re-serialised copy. With curl and openssl:

\`\`\`sh
TS=$(date +%s)
SIG=$(printf '%s' "\${TS}GET/v1/available-banks" | openssl dgst -sha256 -hmac "$API_SECRET" -hex | sed 's/^.* //')
curl -s http://localhost:8080/v1/available-banks -H "X-API-Key: $API_KEY" -H "X-Timestamp: $TS" -H "X-Signature: $SIG"
\`\`\`

In Node, \`@payments/signing\` makes the headers:

\`\`\`js
import { signedHeaders } from "@payments/signing";

const body = JSON.stringify({ processId: "order-1", amount: 150000, customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } });
const res = await fetch("http://localhost:8080/v1/deposit", {
  method: "POST",
  headers: { "content-type": "application/json", ...signedHeaders({ apiKey, apiSecret }, { method: "POST", path: "/v1/deposit", body }) },
  body,
});
const { success, data, error } = await res.json(); // every answer is { success, data | error, timestamp }
\`\`\`

A refused signature is \`401 INVALID_SIGNATURE\`; a clock more than 5 minutes off is \`401 TIMESTAMP_EXPIRED\`.

### 3. Create a deposit

Amounts are integers in the smallest currency unit: \`150000\` is 1,500.00 TRY. \`processId\` is your own order id (1 to 50 characters, unique among your deposits). With the SDK, which signs, retries and types every call:

\`\`\`js
import { PaymentsClient } from "@payments/sdk";

const payments = new PaymentsClient({ baseUrl: "http://localhost:8080", apiKey, apiSecret });
const deposit = await payments.createDeposit({
  processId: "order-1",
  amount: 150000,
  customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" },
  returnUrl: "http://localhost:3000/orders/order-1", // optional: https for a live merchant
});
// deposit.status === "pending"; redirect your customer to deposit.checkoutUrl.
\`\`\`

The answer (\`201\`) carries \`transactionId\`, \`checkoutUrl\` (the customer's payment page), \`assignedAccount\` (bank, holder and IBAN to pay into), \`reference\` and \`expiresAt\` (30 minutes). Optionally pass \`bankCode\`, a bank \`_id\` (or \`FAST\`) from \`GET /v1/available-banks\`, which lists only the banks where a deposit of yours would be accepted now. The checkout page shows your display name, the order's \`processId\`, the amount, the IBAN, the reference and the deadline in Türkiye's time; with \`returnUrl\` it links the customer back to you at every status.

### 4. Pay it in the sandbox

A real customer transfers money to the assigned IBAN. A sandbox merchant can pretend, with the test helper:

\`\`\`js
await payments.sandbox.payDeposit(deposit.transactionId);
// or, signed like any request: POST /v1/sandbox/deposit/{transactionId}/pay  (body optional: {"amount", "senderName"})
\`\`\`

The deposit becomes \`completed\` (\`GET /v1/deposit/{transactionId}\`), and a \`deposit.completed\` callback is on its way. A live merchant gets \`403 SANDBOX_ONLY\`. The checkout page of a sandbox deposit also has a "simulate payment" button.

### 5. Verify the callback

Every status change is POSTed to your callback URL, at least once (retried until you answer a 2xx within 10 s), with the body \`{"id","type","createdAt","data"}\`; \`data\` is the transaction, with a \`sequence\` that grows with each change. Each callback is signed twice; check either:

- \`X-Signature\`: the same HMAC as your requests, keyed with your **API secret**, over \`X-Timestamp + "POST" + path-with-query-of-your-callback-URL + raw body\`; \`X-Event-Id\` and \`X-Event-Type\` name the event.
- [Standard Webhooks](https://www.standardwebhooks.com): \`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "id.timestamp.body">\`), keyed with your **webhook secret** (\`whsec_…\`), so any Standard Webhooks library verifies it.

\`\`\`js
import http from "node:http";
import { verifyCallback, verifyStandardWebhook } from "@payments/signing";

http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks); // the raw bytes: never JSON.stringify(JSON.parse(...))
    const result = verifyCallback({ secrets: apiSecret, headers: req.headers, body, path: req.url });
    // or: verifyStandardWebhook({ secrets: webhookSecret, headers: req.headers, body })
    if (!result.ok) return res.writeHead(401).end(result.reason);
    const { id, type, data } = result.event; // e.g. "deposit.completed", data.transactionId, data.status, data.sequence
    // Store it idempotently: skip an id you have seen, and a sequence not newer than the one you have.
    res.writeHead(204).end();
  });
}).listen(3000);
\`\`\`

That is the whole loop. Withdrawals (\`POST /v1/withdraw\`) work the same way, but only from an IP on your allow-list; the operations below list every endpoint with its fields and errors.
`;
