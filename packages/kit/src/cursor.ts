import type { Knex } from "knex";

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

/**
 * One page of a newest-first listing by (created_at, id): the rows after `after`, at most
 * `limit`, and the cursor of the next page ("" at the end). One extra row is read to know
 * whether there is a next page.
 */
export async function newestFirstPage<Row extends { created_at: number | string; id: string }>(
  query: Knex.QueryBuilder,
  options: { limit: number; after?: ListPosition },
): Promise<{ rows: Row[]; nextCursor: string }> {
  query.orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
  const after = options.after;
  if (after) {
    // The same rows as the OR below alone; said as a plain bound too, so the database seeks an
    // index on (…, created_at) to the cursor instead of reading down from the newest row.
    query.where("created_at", "<=", after.createdAt);
    query.where((q) => {
      q.where("created_at", "<", after.createdAt).orWhere((q2) => {
        q2.where("created_at", after.createdAt).where("id", "<", after.id);
      });
    });
  }
  const rows = (await query.limit(options.limit + 1)) as Row[];
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return { rows: page, nextCursor: rows.length > options.limit && last ? encodeCursor({ createdAt: Number(last.created_at), id: last.id }) : "" };
}
