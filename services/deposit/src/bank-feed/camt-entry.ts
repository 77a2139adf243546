import { formatMajor } from "@payments/kit";
import { BANK_TRANSACTION_ID_MAX, cleanText, decimalToMinorUnits, DESCRIPTION_MAX, hasUnsafeCharacters, isCalendarDate, isValidIban, minorUnitDigits, normalizeIban, SENDER_NAME_MAX } from "./text.js";
import { all, first, textAt, type XmlElement } from "./camt-xml.js";

/*
 * One camt entry (Ntry) and its transaction details (TxDtls) to transfers, for the adapters in
 * camt.ts: amounts, credit/debit, reversal, status and dates; the payer (name, IBAN), the
 * description and the bank's references of each transfer.
 */

const SKIP_REASONS = {
  debit: "debit (money out of the account): only credits are imported",
  creditReversal: "reversal of an earlier credit (money taken back): not imported; an operator should check the credit it reverses",
  debitReversal: "reversal of a debit (a payment of ours returned): not a customer's transfer, not imported",
  zero: "zero amount: nothing was paid",
} as const;

interface Amount {
  units: number;
  currency: string;
}

interface EntryTransfer {
  amount: Amount;
  senderName: string;
  senderIban?: string;
  description: string;
  references: ReadonlyArray<string | undefined>;
  /** 1-based position of its TxDtls in the entry; 0 for an entry without details. */
  detail: number;
}

interface ReadEntry {
  valueDate: string | undefined;
  transfers: EntryTransfer[];
  skipped: Array<{ where: string; line: number | undefined; reason: string }>;
}

/** One Ntry: its transfers when it is a booked credit, else why it is skipped; undefined when it has problems (reported). */
export function readEntry(entry: XmlElement, where: string, problem: (element: XmlElement | undefined, text: string) => void): ReadEntry | undefined {
  // Read through fine() below: report() clears it from inside the readers, which narrowing cannot see.
  let ok = true;
  const fine = (): boolean => ok;
  const report = (element: XmlElement | undefined, text: string) => {
    ok = false;
    problem(element, text);
  };

  const amount = readAmount(first(entry, "Amt"), "Amt", entry, report);
  const indicator = readIndicator(first(entry, "CdtDbtInd"), entry, report);
  const reversal = readReversal(first(entry, "RvslInd"), report);
  const details = all(entry, "NtryDtls", "TxDtls");
  const detailAmounts = details.map((detail, k) => {
    const amountElement = first(detail, "AmtDtls", "TxAmt", "Amt") ?? first(detail, "Amt");
    const detailIndicator = first(detail, "CdtDbtInd");
    return {
      amount: amountElement ? readAmount(amountElement, `TxDtls #${k + 1} amount`, detail, report) : undefined,
      indicator: detailIndicator ? readIndicator(detailIndicator, detail, report) : undefined,
    };
  });
  if (!fine() || !amount || !indicator || reversal === "invalid") return undefined;

  const skip = (reason: string): ReadEntry => ({ valueDate: undefined, transfers: [], skipped: [{ where, line: entry.line, reason }] });
  if (indicator === "DBIT") return skip(reversal ? SKIP_REASONS.creditReversal : SKIP_REASONS.debit);
  if (reversal) return skip(SKIP_REASONS.debitReversal);
  const status = statusOf(entry);
  if (status !== "BOOK") {
    if (status === "PDNG") return skip("pending (Sts PDNG): not booked yet; imported from the statement that shows it booked");
    if (status === "INFO") return skip("information only (Sts INFO): not a booking");
    return skip(status === undefined ? "no status (Sts): not known to be booked, not imported" : `status ${status}: only booked (BOOK) entries are imported`);
  }

  const valueDate = readValueDate(entry, report);
  if (!fine() || valueDate === undefined) return undefined;
  const entryReference = usableReference(textAt(entry, "AcctSvcrRef"));
  const entryInfo = textAt(entry, "AddtlNtryInf");

  if (details.length === 0) {
    if (amount.units === 0) return skip(SKIP_REASONS.zero);
    return { valueDate, skipped: [], transfers: [{ amount, senderName: "", description: cleanText(entryInfo ?? "", DESCRIPTION_MAX), references: [undefined, entryReference], detail: 0 }] };
  }

  // The details must account for the entry exactly: credits add, a debit detail inside a credit entry (a charge) subtracts.
  if (details.length > 1 || detailAmounts[0]?.amount) {
    let sum = 0n;
    detailAmounts.forEach((d, k) => {
      if (!d.amount) return report(details[k], `TxDtls #${k + 1} has no amount, so the entry's ${details.length} transfers cannot be told apart`);
      if (d.amount.currency !== amount.currency) return report(details[k], `TxDtls #${k + 1} is in ${d.amount.currency}, the entry in ${amount.currency}`);
      sum += (d.indicator === "DBIT" ? -1n : 1n) * BigInt(d.amount.units);
    });
    if (fine() && sum !== BigInt(amount.units)) {
      report(entry, `the amounts of its ${details.length} TxDtls add up to ${formatMajor(sum, amount.currency)}, not the entry's ${formatMajor(amount.units, amount.currency)}`);
    }
    if (!fine()) return undefined;
  }

  const result: ReadEntry = { valueDate, transfers: [], skipped: [] };
  details.forEach((detail, k) => {
    const detailWhere = details.length > 1 ? `${where}, TxDtls #${k + 1}` : where;
    const detailAmount = detailAmounts[k]?.amount ?? amount;
    if (detailAmounts[k]?.indicator === "DBIT") {
      result.skipped.push({ where: detailWhere, line: detail.line, reason: `${SKIP_REASONS.debit} (a debit inside a credit entry)` });
      return;
    }
    if (detailAmount.units === 0) {
      result.skipped.push({ where: detailWhere, line: detail.line, reason: SKIP_REASONS.zero });
      return;
    }
    const sender = senderOf(detail);
    result.transfers.push({
      amount: detailAmount,
      senderName: sender.name,
      ...(sender.iban ? { senderIban: sender.iban } : {}),
      description: descriptionOf(detail, entryInfo),
      references: [usableReference(textAt(detail, "Refs", "AcctSvcrRef")), entryReference && details.length > 1 ? usableReference(`${entryReference}/${k + 1}`) : entryReference, usableReference(textAt(detail, "Refs", "TxId")), usableReference(textAt(detail, "Refs", "EndToEndId"))],
      detail: k + 1,
    });
  });
  return result;
}

function readAmount(element: XmlElement | undefined, what: string, parent: XmlElement, report: (element: XmlElement | undefined, text: string) => void): Amount | undefined {
  if (!element) {
    report(parent, `${what} is missing`);
    return undefined;
  }
  const currency = element.attributes["Ccy"]?.trim() ?? "";
  if (!/^[A-Z]{3}$/.test(currency)) {
    report(element, `${what} has no currency (a Ccy attribute such as "TRY")${currency ? `: "${currency}"` : ""}`);
    return undefined;
  }
  const units = /^\d+(?:\.\d+)?$/.test(element.text) ? decimalToMinorUnits(element.text, minorUnitDigits(currency)) : undefined;
  if (units === undefined) {
    report(element, `${what} "${element.text}" is not an amount in ${currency} (digits, a point, at most ${minorUnitDigits(currency)} decimals)`);
    return undefined;
  }
  return { units, currency };
}

function readIndicator(element: XmlElement | undefined, parent: XmlElement, report: (element: XmlElement | undefined, text: string) => void): "CRDT" | "DBIT" | undefined {
  if (!element) {
    report(parent, "CdtDbtInd is missing");
    return undefined;
  }
  if (element.text === "CRDT" || element.text === "DBIT") return element.text;
  report(element, `CdtDbtInd "${element.text}" is neither CRDT nor DBIT`);
  return undefined;
}

function readReversal(element: XmlElement | undefined, report: (element: XmlElement | undefined, text: string) => void): boolean | "invalid" {
  if (!element) return false;
  if (element.text === "true" || element.text === "1") return true;
  if (element.text === "false" || element.text === "0") return false;
  report(element, `RvslInd "${element.text}" is not a boolean`);
  return "invalid";
}

/** `<Sts>BOOK</Sts>` (.02) or `<Sts><Cd>BOOK</Cd></Sts>` (.08; or Prtry). */
function statusOf(entry: XmlElement): string | undefined {
  const status = first(entry, "Sts");
  if (!status) return undefined;
  return (textAt(status, "Cd") ?? textAt(status, "Prtry") ?? status.text) || undefined;
}

/** ValDt (its Dt, or the date part of DtTm as the bank wrote it, never shifted to another zone), else BookgDt. */
function readValueDate(entry: XmlElement, report: (element: XmlElement | undefined, text: string) => void): string | undefined {
  for (const name of ["ValDt", "BookgDt"]) {
    const element = first(entry, name);
    if (!element) continue;
    const date = textAt(element, "Dt");
    const dateTime = textAt(element, "DtTm");
    const value = date ?? (dateTime && /^\d{4}-\d{2}-\d{2}T/.test(dateTime) ? dateTime.slice(0, 10) : dateTime);
    if (value === undefined) continue;
    if (!isCalendarDate(value)) {
      report(element, `${name} "${date ?? dateTime}" is not a date (YYYY-MM-DD, or a date and time)`);
      return undefined;
    }
    return value;
  }
  report(entry, "neither ValDt nor BookgDt gives a date");
  return undefined;
}

/** A reference that can be a bank transaction id: present, not NOTPROVIDED, fits the column, nothing unsafe in it. */
function usableReference(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed || trimmed.toUpperCase() === "NOTPROVIDED" || trimmed.length > BANK_TRANSACTION_ID_MAX || hasUnsafeCharacters(trimmed)) return undefined;
  return trimmed;
}

/** The payer: Dbtr (.02 Nm, .08 Pty/Nm), else the ultimate debtor; the IBAN of DbtrAcct when it is a valid one. */
function senderOf(detail: XmlElement): { name: string; iban?: string } {
  const parties = first(detail, "RltdPties");
  const name = textAt(parties, "Dbtr", "Nm") ?? textAt(parties, "Dbtr", "Pty", "Nm") ?? textAt(parties, "UltmtDbtr", "Nm") ?? textAt(parties, "UltmtDbtr", "Pty", "Nm") ?? "";
  const iban = normalizeIban(textAt(parties, "DbtrAcct", "Id", "IBAN") ?? "");
  return { name: cleanText(name, SENDER_NAME_MAX), ...(iban && isValidIban(iban) ? { iban } : {}) };
}

/**
 * What the payer wrote, where the payment reference is: the unstructured remittance lines, then
 * the structured creditor references and additional remittance text; only when there is no
 * remittance information at all, the bank's additional transaction and entry information
 * (Turkish banks often put the payer's description there).
 */
function descriptionOf(detail: XmlElement, entryInfo: string | undefined): string {
  const remittance = first(detail, "RmtInf");
  const parts: string[] = [];
  const add = (value: string | undefined) => {
    if (value && !parts.includes(value)) parts.push(value);
  };
  for (const line of all(remittance, "Ustrd")) add(line.text);
  for (const structured of all(remittance, "Strd")) {
    for (const ref of all(structured, "CdtrRefInf", "Ref")) add(ref.text);
    for (const info of all(structured, "AddtlRmtInf")) add(info.text);
  }
  if (parts.length === 0) {
    add(textAt(detail, "AddtlTxInf"));
    add(entryInfo);
  }
  return cleanText(parts.join(" "), DESCRIPTION_MAX);
}
