import type { DepositStatusName, WithdrawalStatusName } from "./statuses.js";

// Every event topic (NATS subject), named once: nothing else spells one. Topics are
// "<service>.v1.<event>"; the bus adds the deployment's subject prefix.

/** MerchantChanged: every change to a merchant (created, secret rotated, IPs, callback URL, status, sandbox, rate limit). Caches of merchant data drop the merchant on it. */
export const MERCHANT_CHANGED_TOPIC = "merchant.v1.merchant_changed";

/** CatalogChanged: every change to the bank catalog (banks, FAST, merchant limits, receiving accounts). Caches of catalog data drop everything on it. */
export const CATALOG_CHANGED_TOPIC = "bankcatalog.v1.catalog_changed";

/** TransferReturnChanged (payout): a return of an incoming transfer's money to its sender was completed. The deposit service marks the transfer returned. */
export const TRANSFER_RETURN_COMPLETED_TOPIC = "payout.v1.transfer_return_completed";

/** TransferReturnChanged (payout): a return failed. The deposit service puts the transfer back to unmatched (its money stays in suspense). */
export const TRANSFER_RETURN_FAILED_TOPIC = "payout.v1.transfer_return_failed";

/** TransferReturnRequested (deposit): an operator or a merchant's rule decided to pay an incoming transfer's money back. The payout service creates the return. */
export const TRANSFER_RETURN_REQUESTED_TOPIC = "deposit.v1.transfer_return_requested";

// ---------------------------------------------------------------- status changes

/** DepositStatusChanged, one topic per status a deposit moves to (never back to pending). The callback-sender tells merchants; the payout service credits completed deposits. */
export const DEPOSIT_STATUS_TOPICS = {
  completed: "deposit.v1.deposit_completed",
  failed: "deposit.v1.deposit_failed",
  expired: "deposit.v1.deposit_expired",
  cancelled: "deposit.v1.deposit_cancelled",
} as const satisfies Readonly<Partial<Record<DepositStatusName, string>>>;
export type DepositTopicStatus = keyof typeof DEPOSIT_STATUS_TOPICS;

/** The one deposit status change another service acts on: the payout service credits the merchant's balance. */
export const DEPOSIT_COMPLETED_TOPIC = DEPOSIT_STATUS_TOPICS.completed;

/** WithdrawalStatusChanged, one topic per status a withdrawal moves to (never back to pending). The callback-sender tells merchants. */
export const WITHDRAWAL_STATUS_TOPICS = {
  processing: "payout.v1.withdrawal_processing",
  completed: "payout.v1.withdrawal_completed",
  failed: "payout.v1.withdrawal_failed",
  cancelled: "payout.v1.withdrawal_cancelled",
} as const satisfies Readonly<Partial<Record<WithdrawalStatusName, string>>>;
export type WithdrawalTopicStatus = keyof typeof WITHDRAWAL_STATUS_TOPICS;

/** WithdrawalApproved (payout): a person of the merchant approved an API key's withdrawal that waited for the merchant's four-eyes. Internal: not a status change, so no callback. */
export const WITHDRAWAL_APPROVED_TOPIC = "payout.v1.withdrawal_approved";

/** The status a status-change topic announces, or undefined for any other topic. */
export function topicStatus<Status extends string>(topics: Readonly<Record<Status, string>>, topic: string): Status | undefined {
  return (Object.keys(topics) as Status[]).find((status) => topics[status] === topic);
}

// ---------------------------------------------------------------- wildcards

/** Every event the deposit service publishes (a NATS wildcard; a consumer takes one filter). */
export const DEPOSIT_EVENTS = "deposit.v1.>";

/** Every event the payout service publishes. */
export const PAYOUT_EVENTS = "payout.v1.>";

// ---------------------------------------------------------------- the audit's head

/**
 * AuditHead (operator.v1, events.proto): each service's audit chain head, published at least
 * every minute on a subject of its own (`operator.v1.audit_head.<service>`), so the last one of
 * each service is one lookup (JetStream's last message by subject). Nobody consumes it: a
 * verifier (`pnpm cli audit verify`) reads it to find a cut tail.
 */
export function auditHeadTopic(service: string): string {
  return `operator.v1.audit_head.${service}`;
}

/** Every service's AuditHead. */
export const AUDIT_HEAD_TOPICS = "operator.v1.audit_head.*";
