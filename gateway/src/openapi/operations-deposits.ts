import { MAX_JSON_DEPTH } from "../json-depth.js";
import { byProcessIdQuery as depositByProcessId, createDepositBody } from "../routes/deposits.js";
import { BANK_ID_MAX } from "../routes/route.js";
import { sandboxPayBody } from "../routes/sandbox.js";
import { completedDepositExample, DEPOSIT_ID, depositExample, ZIRAAT_BANK_ID } from "./examples.js";
import type { OperationSpec } from "./operations.js";
import { CURRENCY, NOT_AN_ID, PROCESS_ID_RULE, TEXT } from "./operations-texts.js";
import { SCOPES } from "../key-scopes.js";

const DEPOSIT_ID_PARAM = { description: `The deposit's \`transactionId\` as the gateway returned it (\`dep_\` and 22 URL-safe characters). ${NOT_AN_ID}`, example: DEPOSIT_ID };

/** The deposit operations (create, get by processId or id, cancel), in the document's order. */
export const DEPOSIT_OPERATIONS: readonly OperationSpec[] = [
  {
    method: "post",
    path: "/v1/deposit",
    operationId: "createDeposit",
    scopes: SCOPES.deposits,
    tag: "Deposits",
    summary: "Create a deposit",
    description:
      "Creates a pending deposit and assigns a receiving account. Redirect the customer to `checkoutUrl`; the final status arrives by callback. The deposit expires 30 minutes after creation (`expiresAt`). Unknown fields are ignored.",
    body: {
      schema: createDepositBody,
      required: true,
      example: { processId: "order-1001", amount: 150000, currency: "TRY", bankCode: ZIRAAT_BANK_ID, customer: { id: "cust-42", name: "Ayşe Yılmaz", username: "ayse" }, metadata: { cartId: "c-9001" }, returnUrl: "https://shop.example.com/orders/order-1001" },
      descriptions: {
        processId: `Your id of this deposit: ${PROCESS_ID_RULE}. Unique among your deposits (withdrawals have their own): a second deposit with it is 400 DUPLICATE_TRANSACTION, whose \`error.details.transactionId\` is the first; checked by the deposit service.`,
        amount:
          "Integer in the smallest currency unit (kuruş for TRY). It must also lie within the chosen bank's `minAmount`..`maxAmount` of GET /v1/available-banks (without `bankCode`, your widest limits): otherwise 400 AMOUNT_OUT_OF_RANGE, checked by the deposit service because the limits are per bank and per merchant.",
        currency: CURRENCY,
        bankCode: `A bank's \`_id\` (\`bnk_…\`) or \`FAST\` from GET /v1/available-banks, at most ${BANK_ID_MAX} characters; null or absent: any of your banks. One not open to you now is 400 VALIDATION_ERROR, and a listed bank with no receiving account free is 400 BANK_UNAVAILABLE; both checked by the deposit service against the catalog.`,
        customer: "Your customer, as you know them.",
        "customer.id": `Your id of the customer: ${TEXT}.`,
        "customer.name": `The customer's full name: ${TEXT}.`,
        "customer.username": `The customer's username: ${TEXT}.`,
        metadata: `Any JSON object, echoed back in the deposit record and its callbacks: at most 8 KiB as JSON text (checked by the deposit service) and nested at most ${MAX_JSON_DEPTH} levels deep.`,
      },
    },
    success: { status: 201, data: "Deposit", description: "The new deposit, `pending`", example: depositExample },
    errors: { 400: ["DUPLICATE_TRANSACTION", "AMOUNT_OUT_OF_RANGE", "BANK_UNAVAILABLE"], 409: ["MERCHANT_MODE_CHANGING"] },
  },
  {
    method: "get",
    path: "/v1/deposit",
    operationId: "getDepositByProcessId",
    scopes: SCOPES.readDeposits,
    tag: "Deposits",
    summary: "Get a deposit by your processId",
    description: "The deposit you created with this `processId`.",
    query: { schema: depositByProcessId, descriptions: { processId: `Your processId of the deposit: ${PROCESS_ID_RULE}` }, examples: { processId: "order-1001" } },
    success: { status: 200, data: "Deposit", description: "The deposit", example: completedDepositExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "get",
    path: "/v1/deposit/{transactionId}",
    operationId: "getDeposit",
    scopes: SCOPES.readDeposits,
    tag: "Deposits",
    summary: "Get a deposit",
    description: "The deposit with this `transactionId`.",
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
    success: { status: 200, data: "Deposit", description: "The deposit", example: completedDepositExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "post",
    path: "/v1/deposit/{transactionId}/cancel",
    operationId: "cancelDeposit",
    scopes: SCOPES.deposits,
    tag: "Deposits",
    summary: "Cancel a pending deposit",
    description:
      "Moves a `pending` deposit to `cancelled` (a `deposit.cancelled` callback follows). No body is needed; any body sent must be a JSON object and is ignored. Cancelling a cancelled deposit answers 200 with it unchanged; any other final status is 409.",
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
    success: { status: 200, data: "Deposit", description: "The deposit, `cancelled`", example: { ...depositExample, status: "cancelled", sequence: 2, completedAt: "2026-11-22T10:20:00.000Z", updatedAt: "2026-11-22T10:20:00.000Z" } },
    errors: { 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
];

/** The sandbox helpers on a deposit (pay, expire): the document's last operations. */
export const SANDBOX_OPERATIONS: readonly OperationSpec[] = [
  {
    method: "post",
    path: "/v1/sandbox/deposit/{transactionId}/pay",
    operationId: "sandboxPayDeposit",
    scopes: SCOPES.deposits,
    tag: "Sandbox",
    summary: "Pay a sandbox deposit",
    description:
      "Sandbox merchants only: reports an incoming transfer matching the deposit, through the same path as a real bank's report, so the deposit completes and its callback is sent. The body is optional: without `amount` the transfer is of the deposit's amount; without `senderName` it comes from the deposit's customer.",
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
    body: {
      schema: sandboxPayBody,
      required: false,
      example: { amount: 150000, senderName: "Ayşe Yılmaz" },
      descriptions: {
        amount: "The amount transferred, an integer in the smallest currency unit; default the deposit's amount. Another amount is handled as a real transfer of it would be.",
        senderName: `The transfer's sender name; \`""\`, null or absent: the deposit's customer name. Otherwise ${TEXT}.`,
      },
    },
    success: { status: 200, data: "Deposit", description: "The deposit after the transfer", example: completedDepositExample },
    errors: { 403: ["SANDBOX_ONLY"], 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
  {
    method: "post",
    path: "/v1/sandbox/deposit/{transactionId}/expire",
    operationId: "sandboxExpireDeposit",
    scopes: SCOPES.deposits,
    tag: "Sandbox",
    summary: "Expire a sandbox deposit now",
    description: "Sandbox merchants only: the expiry job's move, now, for a `pending` deposit (a `deposit.expired` callback follows). No body is needed.",
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
    success: { status: 200, data: "Deposit", description: "The deposit, `expired`", example: { ...depositExample, status: "expired", sequence: 2, completedAt: "2026-11-22T10:16:00.000Z", updatedAt: "2026-11-22T10:16:00.000Z" } },
    errors: { 403: ["SANDBOX_ONLY"], 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
];
