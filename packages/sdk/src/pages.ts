/**
 * A listing that walks every page: `for await (const item of listing)` gives each item of
 * every page in order, `listing.pages()` each page. The gateway's cursors are opaque and
 * `nextCursor` is null on the last page, so the client only ever passes back what it got.
 */
export interface Paginated<Item, Page extends { items: Item[]; nextCursor?: string | null }> extends AsyncIterable<Item> {
  /** Every page, starting at the query's own `cursor` (or the first page). */
  pages(): AsyncIterableIterator<Page>;
  /** Every item, up to `max` of them, in one array. Mind the size of a listing without filters. */
  toArray(max?: number): Promise<Item[]>;
}

export function paginate<Item, Page extends { items: Item[]; nextCursor?: string | null }>(
  firstCursor: string | undefined,
  fetchPage: (cursor: string | undefined) => Promise<Page>,
): Paginated<Item, Page> {
  async function* pages(): AsyncIterableIterator<Page> {
    let cursor = firstCursor;
    for (;;) {
      const page = await fetchPage(cursor);
      yield page;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }
  async function* items(): AsyncIterableIterator<Item> {
    for await (const page of pages()) yield* page.items;
  }
  return {
    pages,
    [Symbol.asyncIterator]: items,
    async toArray(max = Number.POSITIVE_INFINITY) {
      const all: Item[] = [];
      if (max <= 0) return all;
      for await (const item of items()) {
        all.push(item);
        if (all.length >= max) break;
      }
      return all;
    },
  };
}
