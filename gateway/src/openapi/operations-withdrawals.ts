import { BANK_ID_MAX, IBAN_INPUT_MAX } from "../routes/route.js";
import { byProcessIdQuery as withdrawalByProcessId, createWithdrawalBody } from "../routes/withdrawals.js";
import { AKBANK_BANK_ID, RECIPIENT_IBAN, WITHDRAWAL_ID, withdrawalExample } from "./examples.js";
import type { OperationSpec } from "./operations.js";
import { CURRENCY, NOT_AN_ID, PROCESS_ID_RULE, TEXT } from "./operations-texts.js";
import { SCOPES } from "../key-scopes.js";

const WITHDRAWAL_ID_PARAM = { description: `The withdrawal's \`transactionId\` as the gateway returned it (\`wdr_\` and 22 URL-safe characters). ${NOT_AN_ID}`, example: WITHDRAWAL_ID };

/** The withdrawal operations (create, get by processId or id, cancel), in the document's order. */
export const WITHDRAWAL_OPERATIONS: readonly OperationSpec[] = [
  {
    method: "post",
    path: "/v1/withdraw",
    operationId: "createWithdrawal",
    scopes: SCOPES.withdrawals,
    tag: "Withdrawals",
    summary: "Create a withdrawal",
    description:
      "Sends money from your available balance to a recipient's IBAN: the amount is held at once, and the withdrawal moves `pending` → `processing` → `completed` or `failed` (callbacks on each change). Only from an IP on your allow-list; an empty list refuses every caller. Unknown fields are ignored.",
    body: {
      schema: createWithdrawalBody,
      required: true,
      example: { processId: "payout-2001", amount: 50000, bankId: AKBANK_BANK_ID, accountName: "Mehmet Demir", iban: RECIPIENT_IBAN, userId: "cust-42", userName: "mehmet", name: "Mehmet Demir" },
      descriptions: {
        processId: `Your id of this withdrawal: ${PROCESS_ID_RULE}. Unique among your withdrawals (deposits have their own): a second withdrawal with it is 400 DUPLICATE_TRANSACTION, whose \`error.details.transactionId\` is the first; checked by the payout service.`,
        amount:
          "Integer in the smallest currency unit (kuruş for TRY). At most your `available` balance in this currency (GET /v1/balance): otherwise 400 INSUFFICIENT_BALANCE and nothing changes, checked by the payout service as it holds the amount.",
        currency: CURRENCY,
        bankId: `The recipient's bank: a bank's \`_id\` (\`bnk_…\`) from GET /v1/available-banks, at most ${BANK_ID_MAX} characters; null or absent: not named. One the bank catalog does not know is 400 VALIDATION_ERROR, checked by the payout service.`,
        accountName: `The recipient's account holder: ${TEXT}.`,
        iban: `The recipient's Turkish IBAN, at most ${IBAN_INPUT_MAX} characters as sent. Spaces are removed and letters upper-cased; what is left must be 26 characters, start with \`TR\` and carry valid ISO 13616 mod-97 check digits (\`TR64 0004 6000 0018 7230 4596 11\` is fine): otherwise 400 INVALID_IBAN, checked by the payout service.`,
        userId: `Your id of the customer: ${TEXT}.`,
        userName: `The customer's username: ${TEXT}.`,
        name: `The customer's full name: ${TEXT}.`,
      },
    },
    success: { status: 201, data: "Withdrawal", description: "The new withdrawal, `pending`", example: withdrawalExample },
    errors: { 400: ["DUPLICATE_TRANSACTION", "INVALID_IBAN", "INSUFFICIENT_BALANCE"], 409: ["MERCHANT_MODE_CHANGING"] },
  },
  {
    method: "get",
    path: "/v1/withdraw",
    operationId: "getWithdrawalByProcessId",
    scopes: SCOPES.readWithdrawals,
    tag: "Withdrawals",
    summary: "Get a withdrawal by your processId",
    description: "The withdrawal you created with this `processId`.",
    query: { schema: withdrawalByProcessId, descriptions: { processId: `Your processId of the withdrawal: ${PROCESS_ID_RULE}` }, examples: { processId: "payout-2001" } },
    success: { status: 200, data: "Withdrawal", description: "The withdrawal", example: withdrawalExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "get",
    path: "/v1/withdraw/{transactionId}",
    operationId: "getWithdrawal",
    scopes: SCOPES.readWithdrawals,
    tag: "Withdrawals",
    summary: "Get a withdrawal",
    description: "The withdrawal with this `transactionId`.",
    pathParams: { transactionId: WITHDRAWAL_ID_PARAM },
    success: { status: 200, data: "Withdrawal", description: "The withdrawal", example: withdrawalExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "post",
    path: "/v1/withdraw/{transactionId}/cancel",
    operationId: "cancelWithdrawal",
    scopes: SCOPES.withdrawals,
    tag: "Withdrawals",
    summary: "Cancel a pending withdrawal",
    description:
      "Moves a `pending` withdrawal to `cancelled` and returns the held amount to the balance. No body is needed; any body sent must be a JSON object and is ignored. A repeated cancel answers 200 unchanged; once processing has started it is 409.",
    pathParams: { transactionId: WITHDRAWAL_ID_PARAM },
    success: { status: 200, data: "Withdrawal", description: "The withdrawal, `cancelled`", example: { ...withdrawalExample, status: "cancelled", sequence: 2, completedAt: "2026-11-22T11:01:00.000Z", updatedAt: "2026-11-22T11:01:00.000Z" } },
    errors: { 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
];
