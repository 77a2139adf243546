import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MerchantSchema, MerchantStatus, type Merchant } from "@payments/contracts/merchant";
import { secretValidAt, type MerchantStatusName } from "./merchant.js";
import type { MerchantRecord, SecretInfo } from "./merchant-store.js";

export function statusToProto(status: MerchantStatusName): MerchantStatus {
  return status === "active" ? MerchantStatus.ACTIVE : MerchantStatus.DISABLED;
}

export function timestampFromMs(ms: number) {
  return timestampFromDate(new Date(ms));
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
    secrets: secrets.map((secret) => ({
      id: secret.id,
      createdAt: timestampFromMs(secret.createdAt),
      expiresAt: secret.expiresAt === null ? undefined : timestampFromMs(secret.expiresAt),
      valid: secretValidAt(secret, now),
    })),
    createdAt: timestampFromMs(merchant.createdAt),
    updatedAt: timestampFromMs(merchant.updatedAt),
  });
}
