import type { z } from "zod";
import { statementCsv } from "../routes/statement.js";
import type { balanceListSchema, bankListSchema, callbackBodySchema, depositSchema, eventSchema, statementSchema, withdrawalSchema } from "./schemas.js";

/*
 * Example answers for the document. Typed by the response schemas, and parsed with them in
 * test/openapi.test.ts, so an example can never show a field the gateway does not send.
 */

export const depositExample: z.output<typeof depositSchema> = {
  transactionId: "dep_5hGk2QmT9xYb7LwN",
  type: "deposit",
  processId: "order-1001",
  amount: 150000,
  requestedAmount: 150000,
  currency: "TRY",
  status: "pending",
  assignedAccount: { bankName: "Ziraat Bankası", accountName: "Örnek Ödeme A.Ş.", iban: "TR330006100519786457841326" },
  reference: "K7P2QX",
  checkoutUrl: "https://pay.example.com/checkout?token=q2VwZ0x9fX3kT8bR1mN4sA",
  bankCode: "ziraat",
  customer: { id: "cust-42", name: "Ayşe Yılmaz", username: "ayse" },
  metadata: { cartId: "c-9001" },
  failureReason: null,
  sequence: 1,
  expiresAt: "2026-11-22T10:45:30.123Z",
  createdAt: "2026-11-22T10:15:30.123Z",
  updatedAt: "2026-11-22T10:15:30.123Z",
  completedAt: null,
};

export const completedDepositExample: z.output<typeof depositSchema> = {
  ...depositExample,
  status: "completed",
  sequence: 2,
  updatedAt: "2026-11-22T10:21:04.512Z",
  completedAt: "2026-11-22T10:21:04.512Z",
};

export const withdrawalExample: z.output<typeof withdrawalSchema> = {
  transactionId: "wd_8cJr3VnQ1zKe6HsP",
  type: "withdrawal",
  processId: "payout-2001",
  amount: 50000,
  currency: "TRY",
  status: "pending",
  bankId: null,
  accountName: "Mehmet Demir",
  iban: "TR320010009999901234567890",
  userId: "cust-42",
  userName: "mehmet",
  name: "Mehmet Demir",
  failureReason: null,
  sequence: 1,
  createdAt: "2026-11-22T11:00:00.000Z",
  updatedAt: "2026-11-22T11:00:00.000Z",
  completedAt: null,
};

export const bankListExample: z.output<typeof bankListSchema> = {
  banks: [
    { _id: "ziraat", name: "Ziraat Bankası", code: "0010", minAmount: 1000, maxAmount: 5000000, logo: "https://pay.example.com/assets/banks/0010.svg" },
    { _id: "FAST", name: "FAST", code: "FAST", minAmount: 1000, maxAmount: 10000000 },
  ],
};

export const balanceListExample: z.output<typeof balanceListSchema> = {
  balances: [{ currency: "TRY", available: 1250000, held: 50000 }],
};

/** A day with a deposit and a withdrawal paid out: the hold moves nothing you own, the debit does. */
export const statementExample: z.output<typeof statementSchema> = {
  currency: "TRY",
  from: "2026-11-22",
  to: "2026-11-22",
  openingBalance: 1200000,
  closingBalance: 1300000,
  movements: [
    { at: "2026-11-22T10:05:12.345Z", kind: "deposit_credit", amount: 150000, availableChange: 150000, heldChange: 0, balanceAfter: 1350000, transactionId: "dep_5hGk2QmT9xYb7LwN", processId: "order-1001" },
    { at: "2026-11-22T11:00:00.000Z", kind: "withdrawal_hold", amount: 0, availableChange: -50000, heldChange: 50000, balanceAfter: 1350000, transactionId: "wd_8cJr3VnQ1zKe6HsP", processId: "payout-2001" },
    { at: "2026-11-22T11:02:30.000Z", kind: "withdrawal_debit", amount: -50000, availableChange: 0, heldChange: -50000, balanceAfter: 1300000, transactionId: "wd_8cJr3VnQ1zKe6HsP", processId: "payout-2001" },
  ],
};

export const statementCsvExample = statementCsv(statementExample, Date.parse("2026-11-22T00:00:00.000Z"), Date.parse("2026-11-23T00:00:00.000Z"));

export const callbackBodyExample: z.output<typeof callbackBodySchema> = {
  id: "evt_3nQp7RwX2kLm9TsV",
  type: "deposit.completed",
  createdAt: "2026-11-22T10:21:04.512Z",
  data: completedDepositExample,
};

export const eventExample: z.output<typeof eventSchema> = {
  ...callbackBodyExample,
  deliveryStatus: "delivered",
  nextAttemptAt: null,
  deliveredAt: "2026-11-22T10:21:05.020Z",
  attempts: [
    {
      number: 1,
      attemptedAt: "2026-11-22T10:21:04.900Z",
      url: "https://shop.example.com/payments/callback",
      statusCode: 204,
      latencyMs: 120,
      error: null,
      outcome: "delivered",
    },
  ],
};
