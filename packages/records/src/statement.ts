import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { GetStatementResponse, StatementLine } from "@payments/contracts/payout";
import { CSV_DIALECTS, csvCell, csvLines, csvNumber, kurusToLira, type FileLocale } from "./csv.js";
import { zoneDayStart } from "./time-zone.js";

/*
 * The merchant's statement (GET /v1/statement, and the merchant dashboard's statement page and
 * CSV): the record made of the payout service's GetStatement answer, the period's arithmetic
 * and the CSV, in one place so the API and the dashboard give the same numbers. The gateway's
 * route streams it page by page (and writes the XLSX); the dashboard reads the same pages.
 */

/** The ledger's kinds under their public names: stable, whatever the ledger calls them inside. */
export const STATEMENT_KIND_BY_LEDGER_KIND = {
  deposit_credit: "deposit_credit",
  withdrawal_hold: "withdrawal_hold",
  withdrawal_release: "withdrawal_release",
  withdrawal_settle: "withdrawal_debit",
  adjustment: "adjustment",
} as const;

export const STATEMENT_KINDS = Object.values(STATEMENT_KIND_BY_LEDGER_KIND);
export type StatementKind = (typeof STATEMENT_KINDS)[number];

/** The longest statement, from and to both counted: a leap year fits. The payout service holds the same bound. */
export const STATEMENT_MAX_DAYS = 366;
const DAY_MS = 86_400_000;

export interface StatementMovement {
  at: string;
  kind: StatementKind;
  amount: number;
  availableChange: number;
  heldChange: number;
  balanceAfter: number;
  transactionId: string;
  processId: string | null;
}

export interface StatementRecord {
  currency: string;
  from: string;
  to: string;
  /** The zone whose days `from` and `to` are, when the merchant named one (`timeZone`); absent: UTC days. */
  timeZone?: string;
  openingBalance: number;
  closingBalance: number;
  movements: StatementMovement[];
}

/** A statement without its movements: what a file's head and tail are made of. */
export type StatementHead = Omit<StatementRecord, "movements">;

/**
 * A statement's period from its two dates, each given as the epoch ms of that date's 00:00 UTC:
 * the range [startMs, endMs) the payout service is asked for (`to` is taken whole), or the
 * problem of the `to` date (before `from`, or more than STATEMENT_MAX_DAYS days counting both).
 * The days are UTC's, or with `timeZone` (a name knownTimeZone accepted) that zone's: from the
 * zone's start of `from` to its start of the day after `to`. Such a range may be an hour longer
 * than its days (the clocks went back in it); the payout service takes at most
 * STATEMENT_MAX_DAYS × 24 h, so a range longer than that is the `to` date's problem too.
 */
export function statementPeriod(fromDayMs: number, toDayMs: number, timeZone?: string): { startMs: number; endMs: number; from: string; to: string } | { problem: string } {
  if (toDayMs < fromDayMs) return { problem: "must not be before from" };
  const days = (toDayMs - fromDayMs) / DAY_MS + 1;
  if (days > STATEMENT_MAX_DAYS) return { problem: `must be at most ${STATEMENT_MAX_DAYS} days from from, both counted (this range is ${days})` };
  const dates = { from: new Date(fromDayMs).toISOString().slice(0, 10), to: new Date(toDayMs).toISOString().slice(0, 10) };
  if (timeZone === undefined) return { startMs: fromDayMs, endMs: toDayMs + DAY_MS, ...dates };
  const startMs = zoneDayStart(fromDayMs, timeZone);
  const endMs = zoneDayStart(toDayMs + DAY_MS, timeZone);
  if (endMs - startMs > STATEMENT_MAX_DAYS * DAY_MS) {
    return { problem: `must be at most ${STATEMENT_MAX_DAYS} × 24 hours after from's start in ${timeZone} (the clocks go back in this range): end it a day earlier` };
  }
  return { startMs, endMs, ...dates };
}

function safe(value: bigint, what: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`${what} ${value} is beyond a JSON number's exact range`);
  return n;
}

function publicKind(kind: string): StatementKind {
  if (!Object.hasOwn(STATEMENT_KIND_BY_LEDGER_KIND, kind)) throw new Error(`ledger kind ${kind} has no public statement name`);
  return STATEMENT_KIND_BY_LEDGER_KIND[kind as keyof typeof STATEMENT_KIND_BY_LEDGER_KIND];
}

/** One line of the service's statement as the merchant sees it. */
export function statementMovement(line: StatementLine): StatementMovement {
  const availableChange = safe(line.availableDelta, "availableDelta");
  const heldChange = safe(line.heldDelta, "heldDelta");
  return {
    at: new Date(line.createdAt ? timestampMs(line.createdAt) : 0).toISOString(),
    kind: publicKind(line.kind),
    amount: availableChange + heldChange,
    availableChange,
    heldChange,
    balanceAfter: safe(line.balanceAfter, "balanceAfter"),
    transactionId: line.transactionId,
    processId: line.processId === "" ? null : line.processId,
  };
}

/** The public statement of the service's answer (one page of it); `from` and `to` are the merchant's dates, `timeZone` the zone they are days of when one was named. */
export function statementRecord(res: GetStatementResponse, from: string, to: string, timeZone?: string): StatementRecord {
  const total = (b: GetStatementResponse["opening"], what: string) => safe((b?.available ?? 0n) + (b?.held ?? 0n), what);
  return {
    currency: res.currency,
    from,
    to,
    ...(timeZone !== undefined ? { timeZone } : {}),
    openingBalance: total(res.opening, "opening balance"),
    closingBalance: total(res.closing, "closing balance"),
    movements: res.lines.map(statementMovement),
  };
}

/**
 * The column headers of a statement file, by locale. The English CSV keeps the names it has
 * always had; the XLSX says its times are UTC, since a date cell carries no zone.
 */
export function statementHeaders(currency: string, locale: FileLocale, format: "csv" | "xlsx"): string[] {
  if (locale === "tr") {
    const minor = currency === "TRY" ? "kuruş" : "alt birim";
    return ["Zaman (UTC)", "Tür", `Tutar (${minor})`, `Tutar (${currency})`, `İşlem sonrası bakiye (${minor})`, `İşlem sonrası bakiye (${currency})`, "İşlem numarası", "Referans (processId)"];
  }
  const minor = currency === "TRY" ? "kuruş" : "minor units";
  return [format === "csv" ? "Time" : "Time (UTC)", "Kind", `Amount (${minor})`, `Amount (${currency})`, `Balance after (${minor})`, `Balance after (${currency})`, "Transaction ID", "Process ID"];
}

// CSV. Times stay ISO 8601 UTC text and kinds their public codes in both locales: exact, and
// what a program reading the file (or checking that it ends with closing_balance) expects.

/** The CSV's header row and opening row (at the start of `from`). */
export function statementCsvHead(statement: StatementHead, startMs: number, locale: FileLocale): string {
  const dialect = CSV_DIALECTS[locale];
  const money = (n: number) => [csvNumber(n, dialect), csvNumber(kurusToLira(n), dialect)];
  const header = statementHeaders(statement.currency, locale, "csv").map((name) => csvCell(name, dialect));
  return csvLines([header, [csvCell(new Date(startMs).toISOString(), dialect), csvCell("opening_balance", dialect), "", "", ...money(statement.openingBalance), "", ""]], dialect);
}

/** One CSV row per movement. */
export function statementCsvRows(movements: readonly StatementMovement[], locale: FileLocale): string {
  const dialect = CSV_DIALECTS[locale];
  const money = (n: number) => [csvNumber(n, dialect), csvNumber(kurusToLira(n), dialect)];
  const text = (value: string) => csvCell(value, dialect);
  return csvLines(
    movements.map((m) => [text(m.at), text(m.kind), ...money(m.amount), ...money(m.balanceAfter), text(m.transactionId), text(m.processId ?? "")]),
    dialect,
  );
}

/** The CSV's closing row (at the end of `to`, exclusive). */
export function statementCsvTail(statement: StatementHead, endMs: number, locale: FileLocale): string {
  const dialect = CSV_DIALECTS[locale];
  const money = (n: number) => [csvNumber(n, dialect), csvNumber(kurusToLira(n), dialect)];
  return csvLines([[csvCell(new Date(endMs).toISOString(), dialect), csvCell("closing_balance", dialect), "", "", ...money(statement.closingBalance), "", ""]], dialect);
}

/**
 * The statement as CSV text: a header row, an opening row (at the start of `from`), one row
 * per movement, a closing row (at the end of `to`, exclusive), each amount in the smallest
 * unit and in the currency with two decimals, exactly. Text cells are csvCell's (RFC 4180
 * quoting, formula guard); numbers are written as numbers so a negative amount still sums.
 * English (default): `,` and `.`; Turkish: `;` and `,`, Turkish headers. A file served starts
 * with CSV_BOM, which is no part of this text.
 */
export function statementCsv(statement: StatementRecord, startMs: number, endMs: number, locale: FileLocale = "en"): string {
  return statementCsvHead(statement, startMs, locale) + statementCsvRows(statement.movements, locale) + statementCsvTail(statement, endMs, locale);
}
