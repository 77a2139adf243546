/**
 * The listings' opaque cursors. Withdrawals page by (created_at, id) with the kit's cursor;
 * ledger entries page by their sequence number, which only grows, so one number marks the
 * position. Both are base64url of JSON, opaque to callers.
 */

export { decodeCursor, encodeCursor, type ListPosition } from "@payments/kit";

/** The ledger's position: the seq of the last entry returned. */
export function encodeSeqCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ seq })).toString("base64url");
}

/** undefined when the text is not a cursor encodeSeqCursor issued. */
export function decodeSeqCursor(text: string): number | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const seq = (value as { seq?: unknown }).seq;
    return typeof seq === "number" && Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
  } catch {
    return undefined;
  }
}
