import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Deposit } from "@payments/contracts/deposit";
import { DEPOSIT_STATUSES, depositStatusFromProto, type DepositStatusName } from "@payments/contracts/statuses";
import { fillText } from "./texts.js";

/** The page shows a deposit's public status (@payments/contracts/statuses). */
export const CHECKOUT_STATUSES = DEPOSIT_STATUSES;
export type CheckoutStatus = DepositStatusName;

/**
 * What the customer's page polls about a deposit, and nothing more: no transaction,
 * merchant or customer ids, no metadata. What never changes while the page is open (whom
 * the customer pays, the order, the way back) is in CheckoutOrder, rendered once. The receiving account is withheld
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

export function isFinalStatus(status: CheckoutStatus): boolean {
  return status !== "pending";
}

function safeAmount(value: bigint): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`amount ${value} cannot be sent as a JSON number`);
  return Number(value);
}

/**
 * What the page tells the customer about the order, once, in the HTML: whom they pay, the
 * merchant's order reference, and where to go back. Not in the polled JSON: it does not
 * change, and the simulate answer (SimulatePaymentResponse) does not carry the merchant's name.
 */
export interface CheckoutOrder {
  /** The merchant's display name; null when the service gave none, and the page reads well without it. */
  merchantName: string | null;
  /** The merchant's order reference (processId), as the customer knows the order. */
  processId: string;
  /** The deposit's return URL, only when it is http(s); see safeReturnUrl. */
  returnUrl: string | null;
}

/**
 * The return URL as a link may carry it, or null. The deposit service already refuses any
 * other scheme; this is the defence in depth of the one place that puts it in an href,
 * where `javascript:` or `data:` would run in the page's origin. A URL with a user name or
 * password is refused too: `https://bank.example@evil.example` reads as the bank.
 */
export function safeReturnUrl(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed === "") return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  if (url.username !== "" || url.password !== "") return null;
  return url.href;
}

export function checkoutOrder(deposit: Deposit, merchantDisplayName: string): CheckoutOrder {
  return {
    merchantName: merchantDisplayName.trim() || null,
    processId: deposit.processId,
    returnUrl: safeReturnUrl(deposit.returnUrl),
  };
}

/** Türkiye's one time zone (UTC+3 all year since 2016): the bank's cut-offs and the customer's clock are on it. */
export const TURKIYE_TIME_ZONE = "Europe/Istanbul";

/**
 * The deadline as a date and a time in Türkiye, whatever the server's or the browser's zone:
 * "25 Kasım 2026 23:41" (tr), "25 November 2026, 23:41 (Türkiye time)" (en). The seconds are
 * dropped, not rounded, so the time shown is never later than the real deadline.
 */
export function formatDeadline(instant: string, texts: { locale: string; deadlineFormat: string }): string {
  const parts = new Intl.DateTimeFormat(texts.locale, {
    timeZone: TURKIYE_TIME_ZONE,
    year: "numeric",
    month: "long",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(new Date(instant));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  return fillText(texts.deadlineFormat, { day: part("day"), month: part("month"), year: part("year"), time: `${part("hour")}:${part("minute")}` });
}

export function checkoutView(deposit: Deposit, sandbox: boolean, now: Date): CheckoutView {
  const status = depositStatusFromProto(deposit.status);
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
