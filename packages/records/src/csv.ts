/*
 * CSV as merchants and operators open it in a spreadsheet: RFC 4180 quoting, CRLF line ends,
 * text cells defused against formula injection, and amounts in lira written exactly from
 * kuruş. One implementation for every CSV the system writes (the operator CLI's bank
 * bulk-payment file, the gateway's statement export).
 */

/**
 * One CSV text cell. A value a spreadsheet would read as a formula (starting with =, +, -, @,
 * a tab or a carriage return) gets a leading apostrophe, so whoever opens the file never runs
 * a name someone else chose. Then RFC 4180: a value holding a comma, a double quote, CR or LF
 * is quoted, its quotes doubled.
 */
export function csvCell(value: string): string {
  const inert = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

/**
 * One CSV number cell: an integer, or a decimal such as -1500.50, written as it is. A
 * negative amount must stay a number the spreadsheet sums, so it does not get csvCell's
 * apostrophe; anything that is not such a number is refused rather than written unguarded.
 */
export function csvNumber(value: bigint | number | string): string {
  const text = String(value);
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error(`${JSON.stringify(text)} is not a plain number for a CSV number cell`);
  return text;
}

/** Rows of already-encoded cells (csvCell, csvNumber) as one file: comma-separated, every line ended by CRLF. */
export function csvLines(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.join(",") + "\r\n").join("");
}

/**
 * Kuruş to lira with two decimals, exactly (bigint arithmetic, never a float), keeping the
 * sign: 150050 → "1500.50", -99 → "-0.99".
 */
export function kurusToLira(amount: bigint | number): string {
  const kurus = BigInt(amount);
  const magnitude = kurus < 0n ? -kurus : kurus;
  return `${kurus < 0n ? "-" : ""}${magnitude / 100n}.${(magnitude % 100n).toString().padStart(2, "0")}`;
}
