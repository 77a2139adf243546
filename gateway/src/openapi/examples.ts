import type { z } from "zod";
import { statementCsv } from "../routes/statement.js";
import type { balanceListSchema, bankListSchema, callbackBodySchema, depositSchema, eventSchema, statementSchema, withdrawalSchema } from "./schemas.js";

/*
 * Example answers for the document. Typed by the response schemas, and parsed with them in
 * test/openapi.test.ts, so an example can never show a field the gateway does not send.
 * The values have the shapes the services really issue, so a merchant can model its columns
 * and validators on them (test/openapi.test.ts checks each against its generator): ids are
 * the kit's newId (`dep_`, `wdr_`, `evt_`, `adj_`, `req_` and 22 URL-safe characters), bank
 * ids are the bank catalog's seeded ones (Ziraat, Akbank), IBANs are Turkish ones with valid
 * check digits carrying their bank's code, references are the deposit service's eight
 * characters, checkout tokens 32 URL-safe characters.
 */

/** The seeded catalog's ids of Türkiye Cumhuriyeti Ziraat Bankası (0010) and Akbank (0046). */
export const ZIRAAT_BANK_ID = "bnk_aT0yzWAiN2ssowz9voJJKX";
export const AKBANK_BANK_ID = "bnk_0p-wPL3DK5O9U7dI55jyEo";
export const DEPOSIT_ID = "dep_DLJ1ewVC0-cK6aIcn1PvxA";
export const WITHDRAWAL_ID = "wdr_3S_1bc8dtVWlJ4jbob7ymA";
export const EVENT_ID = "evt_FxNAOaUBqTo4BHhZjbj1YQ";
export const REQUEST_ID = "req_VgDYjkkU2Xtnw45eIggqSg";
/** A receiving account at Ziraat (bank code 00010 inside the IBAN). */
const RECEIVING_IBAN = "TR190001000000058412763901";
/** A recipient's account at Akbank (00046). */
export const RECIPIENT_IBAN = "TR640004600000187230459611";

export const depositExample: z.output<typeof depositSchema> = {
  transactionId: DEPOSIT_ID,
  type: "deposit",
  processId: "order-1001",
  amount: 150000,
  requestedAmount: 150000,
  currency: "TRY",
  status: "pending",
  assignedAccount: { bankName: "Türkiye Cumhuriyeti Ziraat Bankası", accountName: "Örnek Ödeme Hizmetleri A.Ş.", iban: RECEIVING_IBAN },
  reference: "K7M2QX9P",
  checkoutUrl: "https://pay.example.com/checkout?token=zm1YmXXfIOAb1khpA11OJjAT8nkevmR0",
  returnUrl: "https://shop.example.com/orders/order-1001",
  bankCode: ZIRAAT_BANK_ID,
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
  transactionId: WITHDRAWAL_ID,
  type: "withdrawal",
  processId: "payout-2001",
  amount: 50000,
  currency: "TRY",
  status: "pending",
  bankId: AKBANK_BANK_ID,
  accountName: "Mehmet Demir",
  iban: RECIPIENT_IBAN,
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
    { _id: ZIRAAT_BANK_ID, name: "Türkiye Cumhuriyeti Ziraat Bankası", code: "0010", minAmount: 1000, maxAmount: 5000000, logo: "https://pay.example.com/assets/banks/0010.svg" },
    { _id: AKBANK_BANK_ID, name: "Akbank", code: "0046", minAmount: 1000, maxAmount: 5000000, logo: "https://pay.example.com/assets/banks/0046.svg" },
    { _id: "FAST", name: "FAST", code: "FAST", minAmount: 100, maxAmount: 10000000 },
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
    { at: "2026-11-22T10:05:12.345Z", kind: "deposit_credit", amount: 150000, availableChange: 150000, heldChange: 0, balanceAfter: 1350000, transactionId: DEPOSIT_ID, processId: "order-1001" },
    { at: "2026-11-22T11:00:00.000Z", kind: "withdrawal_hold", amount: 0, availableChange: -50000, heldChange: 50000, balanceAfter: 1350000, transactionId: WITHDRAWAL_ID, processId: "payout-2001" },
    { at: "2026-11-22T11:02:30.000Z", kind: "withdrawal_debit", amount: -50000, availableChange: 0, heldChange: -50000, balanceAfter: 1300000, transactionId: WITHDRAWAL_ID, processId: "payout-2001" },
  ],
};

export const statementCsvExample = statementCsv(statementExample, Date.parse("2026-11-22T00:00:00.000Z"), Date.parse("2026-11-23T00:00:00.000Z"));

export const callbackBodyExample: z.output<typeof callbackBodySchema> = {
  id: EVENT_ID,
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
