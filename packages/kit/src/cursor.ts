/**
 * The opaque cursor of a newest-first listing ordered by (created_at, id): the position of
 * the last item returned. Opaque to callers (base64url of JSON) so the ordering can change
 * without breaking them. The format is the one the deposit service issues, so a service can
 * switch to this one without invalidating cursors in flight.
 */
export interface ListPosition {
  createdAt: number;
  id: string;
}

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url");
}

/** undefined when the text is not a cursor encodeCursor issued. */
export function decodeCursor(text: string): ListPosition | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, id] = value as [unknown, unknown];
    if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt) || typeof id !== "string" || id === "") return undefined;
    return { createdAt, id };
  } catch {
    return undefined;
  }
}
