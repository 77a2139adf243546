import type { CreateMerchantResponse } from "@payments/contracts/merchant";

// The data several tests build the same way: who pays and who is paid, what a merchant signs
// with, and the public records' documented field order (api.md) they check replies against.

/** The customer most test deposits come from. */
export const testCustomer = { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } as const;

/** The payee most test withdrawals go to: a valid IBAN the sandbox bank pays. */
export const testPayee = { accountName: "Elif Şahin", iban: "TR330006100519786457841326", userId: "u1", userName: "elif", name: "Elif Şahin" } as const;

/** What a test signs gateway requests with, from a CreateMerchant answer. */
export function credentialsOf(created: CreateMerchantResponse): { id: string; apiKey: string; apiSecret: string } {
  if (!created.merchant) throw new Error("CreateMerchant answered without a merchant");
  return { id: created.merchant.id, apiKey: created.merchant.apiKey, apiSecret: created.apiSecret };
}

/** A deposit's public record: its fields in the documented order. */
export const DEPOSIT_RECORD_KEYS: readonly string[] = [
  "transactionId",
  "type",
  "processId",
  "amount",
  "requestedAmount",
  "currency",
  "status",
  "assignedAccount",
  "reference",
  "checkoutUrl",
  "bankCode",
  "customer",
  "metadata",
  "failureReason",
  "sequence",
  "expiresAt",
  "createdAt",
  "updatedAt",
  "completedAt",
];

/** A withdrawal's public record: its fields in the documented order. */
export const WITHDRAWAL_RECORD_KEYS: readonly string[] = [
  "transactionId",
  "type",
  "processId",
  "amount",
  "currency",
  "status",
  "bankId",
  "accountName",
  "iban",
  "userId",
  "userName",
  "name",
  "failureReason",
  "sequence",
  "createdAt",
  "updatedAt",
  "completedAt",
];
