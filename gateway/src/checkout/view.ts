import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DepositStatus, type Deposit } from "@payments/contracts/deposit";

export const CHECKOUT_STATUSES = ["pending", "completed", "failed", "expired", "cancelled"] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/**
 * What the customer's page may know about a deposit, and nothing more: no transaction,
 * merchant or customer ids, no process id, no metadata. The receiving account is withheld
 * once the deposit is final, because from then on the account may be assigned to someone
 * else and nobody should pay into it for this deposit.
 */
export interface CheckoutView {
  status: CheckoutStatus;
  /** Smallest currency unit (kuruş). */
  amount: number;
  currency: string;
  bankName: string | null;
  accountName: string | null;
  iban: string | null;
  reference: string;
  /** ISO 8601 UTC. */
  expiresAt: string;
  /** The gateway's clock when this view was made, so the page counts down against it and not the customer's clock. */
  serverTime: string;
  /** The merchant is a sandbox merchant: the page offers "simulate payment". */
  sandbox: boolean;
}

const STATUS_NAMES: Readonly<Partial<Record<DepositStatus, CheckoutStatus>>> = {
  [DepositStatus.PENDING]: "pending",
  [DepositStatus.COMPLETED]: "completed",
  [DepositStatus.FAILED]: "failed",
  [DepositStatus.EXPIRED]: "expired",
  [DepositStatus.CANCELLED]: "cancelled",
};

export function isFinalStatus(status: CheckoutStatus): boolean {
  return status !== "pending";
}

function safeAmount(value: bigint): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`amount ${value} cannot be sent as a JSON number`);
  return Number(value);
}

export function checkoutView(deposit: Deposit, sandbox: boolean, now: Date): CheckoutView {
  const status = STATUS_NAMES[deposit.status];
  if (!status) throw new Error(`deposit has an unknown status ${deposit.status}`);
  if (!deposit.expiresAt) throw new Error("deposit has no expiresAt");
  const account = isFinalStatus(status) ? undefined : deposit.assignedAccount;
  return {
    status,
    amount: safeAmount(deposit.amount),
    currency: deposit.currency,
    bankName: account?.bankName ?? null,
    accountName: account?.accountName ?? null,
    iban: account?.iban ?? null,
    reference: deposit.reference,
    expiresAt: timestampDate(deposit.expiresAt).toISOString(),
    serverTime: now.toISOString(),
    sandbox,
  };
}

/** The IBAN in blocks of four, as banks print it: "TR12 0006 2000 …". */
export function groupIban(iban: string): string {
  return iban
    .replace(/\s+/g, "")
    .replace(/(.{4})(?=.)/g, "$1 ");
}

/** Minor units to a localized amount with the currency sign, e.g. 125000 TRY → "₺1.250,00" (tr) or "₺1,250.00" (en). */
export function formatAmount(amount: number, currency: string, locale: string): string {
  try {
    const format = new Intl.NumberFormat(locale, { style: "currency", currency, currencyDisplay: "narrowSymbol" });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(amount / 10 ** digits);
  } catch {
    // A currency code Intl rejects: show it plainly rather than fail the page.
    return `${(amount / 100).toFixed(2)} ${currency}`;
  }
}
