import { DeliveryStatus } from "./gen/payments/callback/v1/callback_pb.js";
import { DepositStatus, TransferStatus } from "./gen/payments/deposit/v1/deposit_pb.js";
import { TransferReturnStatus, WithdrawalStatus, WithheldCreditStatus } from "./gen/payments/payout/v1/payout_pb.js";
import { ApprovalStatus } from "./gen/payments/operator/v1/operator_pb.js";

/*
 * Status names ↔ proto enums, named once (hand-written, not generated). The names are the
 * public ones merchants see in records, the CLI takes and shows, and the services store in
 * their `status` columns: a name here is the exact text in the database.
 *
 * For each kind: the list of names (in the order help texts show them), its name type,
 * `is…StatusName`, `…StatusToProto`, `…StatusName` (throws on UNSPECIFIED or an unknown
 * number: a bug upstream, not a value to show) and `…StatusFromProto` (undefined instead,
 * for list filters where UNSPECIFIED means "any").
 */

interface StatusTable<Name extends string, Proto extends number> {
  is(value: string): value is Name;
  toProto(name: Name): Proto;
  fromProto(status: Proto): Name | undefined;
  name(status: Proto): Name;
}

function statusTable<Name extends string, Proto extends number>(kind: string, names: readonly Name[], byName: Readonly<Record<Name, Proto>>): StatusTable<Name, Proto> {
  const fromProto = (status: Proto): Name | undefined => names.find((n) => byName[n] === status);
  return {
    is: (value: string): value is Name => (names as readonly string[]).includes(value),
    toProto: (name) => byName[name],
    fromProto,
    name: (status) => {
      const name = fromProto(status);
      if (name === undefined) throw new Error(`${kind} status ${status} has no public name`);
      return name;
    },
  };
}

// ---------------------------------------------------------------- deposits

export const DEPOSIT_STATUSES = ["pending", "completed", "failed", "expired", "cancelled"] as const;
export type DepositStatusName = (typeof DEPOSIT_STATUSES)[number];

const deposit = statusTable<DepositStatusName, DepositStatus>("deposit", DEPOSIT_STATUSES, {
  pending: DepositStatus.PENDING,
  completed: DepositStatus.COMPLETED,
  failed: DepositStatus.FAILED,
  expired: DepositStatus.EXPIRED,
  cancelled: DepositStatus.CANCELLED,
});

export const isDepositStatusName: (value: string) => value is DepositStatusName = deposit.is;
/** The proto status of a public status name (for list filters). */
export const depositStatusToProto: (name: DepositStatusName) => DepositStatus = deposit.toProto;
/** The public name of a proto status; throws on UNSPECIFIED or an unknown number. */
export const depositStatusName: (status: DepositStatus) => DepositStatusName = deposit.name;
/** The public name of a proto status; undefined for UNSPECIFIED or an unknown number. */
export const depositStatusFromProto: (status: DepositStatus) => DepositStatusName | undefined = deposit.fromProto;

// ---------------------------------------------------------------- withdrawals

export const WITHDRAWAL_STATUSES = ["pending", "processing", "completed", "failed", "cancelled"] as const;
export type WithdrawalStatusName = (typeof WITHDRAWAL_STATUSES)[number];

const withdrawal = statusTable<WithdrawalStatusName, WithdrawalStatus>("withdrawal", WITHDRAWAL_STATUSES, {
  pending: WithdrawalStatus.PENDING,
  processing: WithdrawalStatus.PROCESSING,
  completed: WithdrawalStatus.COMPLETED,
  failed: WithdrawalStatus.FAILED,
  cancelled: WithdrawalStatus.CANCELLED,
});

export const isWithdrawalStatusName: (value: string) => value is WithdrawalStatusName = withdrawal.is;
export const withdrawalStatusToProto: (name: WithdrawalStatusName) => WithdrawalStatus = withdrawal.toProto;
export const withdrawalStatusName: (status: WithdrawalStatus) => WithdrawalStatusName = withdrawal.name;
export const withdrawalStatusFromProto: (status: WithdrawalStatus) => WithdrawalStatusName | undefined = withdrawal.fromProto;

// ---------------------------------------------------------------- callback deliveries

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatusName = (typeof DELIVERY_STATUSES)[number];

const delivery = statusTable<DeliveryStatusName, DeliveryStatus>("delivery", DELIVERY_STATUSES, {
  pending: DeliveryStatus.PENDING,
  delivered: DeliveryStatus.DELIVERED,
  failed: DeliveryStatus.FAILED,
});

export const isDeliveryStatusName: (value: string) => value is DeliveryStatusName = delivery.is;
export const deliveryStatusToProto: (name: DeliveryStatusName) => DeliveryStatus = delivery.toProto;
export const deliveryStatusName: (status: DeliveryStatus) => DeliveryStatusName = delivery.name;
export const deliveryStatusFromProto: (status: DeliveryStatus) => DeliveryStatusName | undefined = delivery.fromProto;

// ---------------------------------------------------------------- incoming transfers (deposit service)

export const TRANSFER_STATUSES = ["matched", "review", "unmatched", "returning", "returned"] as const;
export type TransferStatusName = (typeof TRANSFER_STATUSES)[number];

const transfer = statusTable<TransferStatusName, TransferStatus>("transfer", TRANSFER_STATUSES, {
  matched: TransferStatus.MATCHED,
  review: TransferStatus.REVIEW,
  unmatched: TransferStatus.UNMATCHED,
  returning: TransferStatus.RETURNING,
  returned: TransferStatus.RETURNED,
});

export const isTransferStatusName: (value: string) => value is TransferStatusName = transfer.is;
export const transferStatusToProto: (name: TransferStatusName) => TransferStatus = transfer.toProto;
export const transferStatusName: (status: TransferStatus) => TransferStatusName = transfer.name;
export const transferStatusFromProto: (status: TransferStatus) => TransferStatusName | undefined = transfer.fromProto;

// ---------------------------------------------------------------- transfer returns (payout service)

export const TRANSFER_RETURN_STATUSES = ["pending", "processing", "completed", "failed"] as const;
export type TransferReturnStatusName = (typeof TRANSFER_RETURN_STATUSES)[number];

const transferReturn = statusTable<TransferReturnStatusName, TransferReturnStatus>("transfer return", TRANSFER_RETURN_STATUSES, {
  pending: TransferReturnStatus.PENDING,
  processing: TransferReturnStatus.PROCESSING,
  completed: TransferReturnStatus.COMPLETED,
  failed: TransferReturnStatus.FAILED,
});

export const isTransferReturnStatusName: (value: string) => value is TransferReturnStatusName = transferReturn.is;
export const transferReturnStatusToProto: (name: TransferReturnStatusName) => TransferReturnStatus = transferReturn.toProto;
export const transferReturnStatusName: (status: TransferReturnStatus) => TransferReturnStatusName = transferReturn.name;
export const transferReturnStatusFromProto: (status: TransferReturnStatus) => TransferReturnStatusName | undefined = transferReturn.fromProto;

// ---------------------------------------------------------------- withheld credits (payout service)

export const WITHHELD_CREDIT_STATUSES = ["open", "credited", "dismissed"] as const;
export type WithheldCreditStatusName = (typeof WITHHELD_CREDIT_STATUSES)[number];

const withheldCredit = statusTable<WithheldCreditStatusName, WithheldCreditStatus>("withheld credit", WITHHELD_CREDIT_STATUSES, {
  open: WithheldCreditStatus.OPEN,
  credited: WithheldCreditStatus.CREDITED,
  dismissed: WithheldCreditStatus.DISMISSED,
});

export const isWithheldCreditStatusName: (value: string) => value is WithheldCreditStatusName = withheldCredit.is;
export const withheldCreditStatusToProto: (name: WithheldCreditStatusName) => WithheldCreditStatus = withheldCredit.toProto;
export const withheldCreditStatusName: (status: WithheldCreditStatus) => WithheldCreditStatusName = withheldCredit.name;
export const withheldCreditStatusFromProto: (status: WithheldCreditStatus) => WithheldCreditStatusName | undefined = withheldCredit.fromProto;

// ---------------------------------------------------------------- approvals (four-eyes, every service)

export const APPROVAL_STATUSES = ["pending", "approved", "rejected", "expired"] as const;
export type ApprovalStatusName = (typeof APPROVAL_STATUSES)[number];

const approval = statusTable<ApprovalStatusName, ApprovalStatus>("approval", APPROVAL_STATUSES, {
  pending: ApprovalStatus.PENDING,
  approved: ApprovalStatus.APPROVED,
  rejected: ApprovalStatus.REJECTED,
  expired: ApprovalStatus.EXPIRED,
});

export const isApprovalStatusName: (value: string) => value is ApprovalStatusName = approval.is;
export const approvalStatusToProto: (name: ApprovalStatusName) => ApprovalStatus = approval.toProto;
export const approvalStatusName: (status: ApprovalStatus) => ApprovalStatusName = approval.name;
export const approvalStatusFromProto: (status: ApprovalStatus) => ApprovalStatusName | undefined = approval.fromProto;
