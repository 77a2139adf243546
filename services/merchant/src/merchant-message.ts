import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LatePaymentRule, MerchantSchema, MerchantStatus, OverpaymentRule, UnderpaymentRule, type Merchant } from "@payments/contracts/merchant";
import { secretValidAt, type LatePaymentRuleName, type MerchantStatusName, type OverpaymentRuleName, type UnderpaymentRuleName } from "./merchant.js";
import type { MerchantRecord, SecretInfo } from "./store.js";

export function statusToProto(status: MerchantStatusName): MerchantStatus {
  return status === "active" ? MerchantStatus.ACTIVE : MerchantStatus.DISABLED;
}

// The paid-amount rules by name and as proto enums, both ways (requests come in as enums).
export const UNDERPAYMENT_TO_PROTO: Readonly<Record<UnderpaymentRuleName, UnderpaymentRule>> = {
  review: UnderpaymentRule.REVIEW,
  complete: UnderpaymentRule.COMPLETE,
};
export const OVERPAYMENT_TO_PROTO: Readonly<Record<OverpaymentRuleName, OverpaymentRule>> = {
  complete: OverpaymentRule.COMPLETE,
  review: OverpaymentRule.REVIEW,
};
export const LATE_PAYMENT_TO_PROTO: Readonly<Record<LatePaymentRuleName, LatePaymentRule>> = {
  review: LatePaymentRule.REVIEW,
  complete: LatePaymentRule.COMPLETE,
  return: LatePaymentRule.RETURN,
};

export function timestampFromMs(ms: number) {
  return timestampFromDate(new Date(ms));
}

/** What the merchant's customers see: its display name, or its name when none is set. Never empty. */
export function displayNameOf(merchant: Pick<MerchantRecord, "name" | "displayName">): string {
  return merchant.displayName ?? merchant.name;
}

/** The public view of a merchant: settings and secret metadata, never a secret value. */
export function toMerchantMessage(merchant: MerchantRecord, secrets: readonly SecretInfo[], now: number): Merchant {
  return create(MerchantSchema, {
    id: merchant.id,
    name: merchant.name,
    status: statusToProto(merchant.status),
    sandbox: merchant.sandbox,
    apiKey: merchant.apiKey,
    allowedIps: merchant.allowedIps,
    callbackUrl: merchant.callbackUrl ?? "",
    rateLimitPerSecond: merchant.rateLimit.perSecond ?? undefined,
    rateLimitBurst: merchant.rateLimit.burst ?? undefined,
    underpayment: UNDERPAYMENT_TO_PROTO[merchant.paymentRules.underpayment],
    overpayment: OVERPAYMENT_TO_PROTO[merchant.paymentRules.overpayment],
    latePayment: LATE_PAYMENT_TO_PROTO[merchant.paymentRules.latePayment],
    secrets: secrets.map((secret) => ({
      id: secret.id,
      createdAt: timestampFromMs(secret.createdAt),
      expiresAt: secret.expiresAt === null ? undefined : timestampFromMs(secret.expiresAt),
      valid: secretValidAt(secret, now),
    })),
    createdAt: timestampFromMs(merchant.createdAt),
    updatedAt: timestampFromMs(merchant.updatedAt),
    displayName: displayNameOf(merchant),
    withdrawalApprovalThreshold: merchant.withdrawalApprovalThreshold === null ? undefined : BigInt(merchant.withdrawalApprovalThreshold),
  });
}
