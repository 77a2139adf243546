import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { DepositService } from "@payments/contracts/deposit";
import type { PayoutService } from "@payments/contracts/payout";
import type { Clock } from "@payments/kit";
import {
  DEPOSIT_STATUSES,
  WITHDRAWAL_STATUSES,
  depositRecord,
  depositStatusToProto,
  isDepositStatusName,
  isWithdrawalStatusName,
  withdrawalRecord,
  withdrawalStatusToProto,
  type TransactionRecord,
} from "@payments/records";
import { z } from "zod";
import { success } from "../envelope.js";
import { callService, validationFailure } from "../errors.js";
import { authenticatedMerchantId, optionalQueryValue, pageLimit, parseInput, type Route } from "./route.js";
import { SCOPES } from "../key-scopes.js";

export const TRANSACTION_TYPES = ["deposit", "withdrawal"] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export type { TransactionRecord };

export interface TransactionPage {
  /** Newest first. */
  items: TransactionRecord[];
  /** Opaque; null at the end. */
  nextCursor: string | null;
}

/** What a listing asks of a source, after the edge has validated it. */
export interface ListFilter {
  merchantId: string;
  status?: string;
  /** Created at or after (ms). */
  from?: number;
  /** Created before (ms). */
  to?: number;
  limit: number;
  cursor?: string;
}

/**
 * One kind of transaction, listed by the service that owns it, newest first (createdAt, then
 * id, both descending) with the service's own opaque cursor. Listing without `type` merges
 * the sources (see mergedPage).
 */
export interface TransactionSource {
  statuses: readonly string[];
  list(filter: ListFilter): Promise<TransactionPage>;
}

/** The service's request fields, by the query parameter a merchant sent. */
const LIST_FIELDS: Readonly<Record<string, string>> = { created_from: "from", created_to: "to", status: "status", limit: "limit", cursor: "cursor" };

export function depositSource(deps: { deposits: Pick<Client<typeof DepositService>, "listDeposits">; publicBaseUrl: string }): TransactionSource {
  return {
    statuses: DEPOSIT_STATUSES,
    async list(filter) {
      if (filter.status !== undefined && !isDepositStatusName(filter.status)) throw new Error(`${filter.status} is not a deposit status`);
      const res = await callService(
        deps.deposits.listDeposits({
          merchantId: filter.merchantId,
          status: filter.status === undefined ? undefined : depositStatusToProto(filter.status),
          createdFrom: filter.from === undefined ? undefined : timestampFromMs(filter.from),
          createdTo: filter.to === undefined ? undefined : timestampFromMs(filter.to),
          limit: filter.limit,
          cursor: filter.cursor ?? "",
        }),
        { fields: LIST_FIELDS },
      );
      return { items: res.deposits.map((d) => depositRecord(d, deps.publicBaseUrl)), nextCursor: res.nextCursor === "" ? null : res.nextCursor };
    },
  };
}

export function withdrawalSource(deps: { payouts: Pick<Client<typeof PayoutService>, "listWithdrawals"> }): TransactionSource {
  return {
    statuses: WITHDRAWAL_STATUSES,
    async list(filter) {
      if (filter.status !== undefined && !isWithdrawalStatusName(filter.status)) throw new Error(`${filter.status} is not a withdrawal status`);
      const res = await callService(
        deps.payouts.listWithdrawals({
          merchantId: filter.merchantId,
          status: filter.status === undefined ? undefined : withdrawalStatusToProto(filter.status),
          createdFrom: filter.from === undefined ? undefined : timestampFromMs(filter.from),
          createdTo: filter.to === undefined ? undefined : timestampFromMs(filter.to),
          limit: filter.limit,
          cursor: filter.cursor ?? "",
        }),
        { fields: LIST_FIELDS },
      );
      return { items: res.withdrawals.map(withdrawalRecord), nextCursor: res.nextCursor === "" ? null : res.nextCursor };
    },
  };
}

// ---------------------------------------------------------------- merging kinds

/**
 * Where a merged listing stands in each source: the source's own cursor ("" = from the
 * start), or null once that source has nothing more to give.
 */
export type MergedPosition = Partial<Record<TransactionType, string | null>>;

const CURSOR_PROBLEM = "is not a cursor from a previous response";

/** The merged cursor: base64url of the JSON of each source's position. Opaque to merchants. */
export function encodeMergedCursor(position: MergedPosition): string {
  return Buffer.from(JSON.stringify(position), "utf8").toString("base64url");
}

/** undefined when the text is not a cursor a merged listing issued. */
export function decodeMergedCursor(text: string): MergedPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return undefined;
    const position: MergedPosition = {};
    for (const [key, cursor] of entries) {
      if (!(TRANSACTION_TYPES as readonly string[]).includes(key)) return undefined;
      if (cursor !== null && typeof cursor !== "string") return undefined;
      position[key as TransactionType] = cursor;
    }
    return position;
  } catch {
    return undefined;
  }
}

/** Newest first: createdAt descending, then transactionId descending (the services' own order). */
export function newerFirst(a: TransactionRecord, b: TransactionRecord): number {
  const byTime = Date.parse(b.createdAt) - Date.parse(a.createdAt);
  if (byTime !== 0) return byTime;
  return a.transactionId < b.transactionId ? 1 : a.transactionId > b.transactionId ? -1 : 0;
}

/**
 * One newest-first page over several sources. Each source is asked for `limit` items from its
 * own position, the lists are merged, and the first `limit` kept. The next cursor holds each
 * source's position after the items it gave to this page: its own next cursor when all of its
 * items were taken, its old position when none were, and otherwise the cursor after exactly
 * the items taken (asked of the source with that many as limit; its cursors are keyset
 * positions, so this names the last item taken). Every item thus appears once, in order,
 * whatever the mix of kinds from page to page. (Under a status filter, an item that changes
 * status between the two calls of one page can shift that position by one, as it would move
 * in any listing filtered by status.)
 */
export async function mergedPage(sources: Partial<Record<TransactionType, TransactionSource>>, filter: ListFilter): Promise<TransactionPage> {
  let start: MergedPosition;
  if (filter.cursor === undefined) {
    start = Object.fromEntries(Object.keys(sources).map((type) => [type, ""]));
  } else {
    const decoded = decodeMergedCursor(filter.cursor);
    if (!decoded) throw validationFailure([{ field: "cursor", problem: CURSOR_PROBLEM }]);
    start = decoded;
  }
  // A source that cannot hold the status (processing deposits, expired withdrawals) is done from the start.
  const active = (Object.entries(sources) as Array<[TransactionType, TransactionSource]>).filter(
    ([type, source]) => typeof start[type] === "string" && (filter.status === undefined || source.statuses.includes(filter.status)),
  );
  const ask = (type: TransactionType, source: TransactionSource, limit: number) => {
    const cursor = start[type];
    return source.list({ ...filter, limit, cursor: cursor ? cursor : undefined });
  };
  const pages = await Promise.all(active.map(([type, source]) => ask(type, source, filter.limit)));

  const taken = active.map(() => 0);
  const items: TransactionRecord[] = [];
  while (items.length < filter.limit) {
    let best = -1;
    for (let i = 0; i < active.length; i++) {
      const candidate = pages[i]!.items[taken[i]!];
      if (candidate === undefined) continue;
      if (best < 0 || newerFirst(candidate, pages[best]!.items[taken[best]!]!) < 0) best = i;
    }
    if (best < 0) break;
    items.push(pages[best]!.items[taken[best]!]!);
    taken[best]! += 1;
  }

  const next: MergedPosition = Object.fromEntries(Object.keys(sources).map((type) => [type, null]));
  await Promise.all(
    active.map(async ([type, source], i) => {
      const page = pages[i]!;
      const count = taken[i]!;
      if (count === page.items.length) next[type] = page.nextCursor;
      else if (count === 0) next[type] = start[type] ?? null;
      else next[type] = (await ask(type, source, count)).nextCursor;
    }),
  );
  const more = Object.values(next).some((cursor) => cursor !== null);
  return { items, nextCursor: more ? encodeMergedCursor(next) : null };
}

const TIME_PROBLEM = "must be an ISO 8601 time, e.g. 2026-11-22T10:15:30.123Z (or a date, 2026-11-22, meaning its start in UTC)";
const isoDateTime = z.iso.datetime({ offset: true });
const isoDate = z.iso.date();

/** An ISO 8601 time with a zone (Z or ±hh:mm), or a plain date (midnight UTC), as epoch ms. */
const time = optionalQueryValue.transform((value, ctx) => {
  if (value === undefined) return undefined;
  const ms = isoDateTime.safeParse(value).success || isoDate.safeParse(value).success ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    ctx.addIssue({ code: "custom", message: TIME_PROBLEM });
    return z.NEVER;
  }
  return ms;
});

export function transactions(deps: {
  deposits: Pick<Client<typeof DepositService>, "listDeposits">;
  payouts: Pick<Client<typeof PayoutService>, "listWithdrawals">;
  clock: Clock;
  publicBaseUrl: string;
}): Route[] {
  const sources: Record<TransactionType, TransactionSource> = {
    deposit: depositSource(deps),
    withdrawal: withdrawalSource(deps),
  };
  const knownStatuses = [...new Set(Object.values(sources).flatMap((s) => s.statuses))];

  // Unknown parameters are ignored; a known one given twice is a VALIDATION_ERROR.
  const listQuery = z.object({
    type: optionalQueryValue.refine((type) => type === undefined || (TRANSACTION_TYPES as readonly string[]).includes(type), `must be one of ${TRANSACTION_TYPES.join(", ")}`),
    status: optionalQueryValue.refine((s) => s === undefined || knownStatuses.includes(s), `must be one of ${knownStatuses.join(", ")}`),
    from: time,
    to: time,
    limit: pageLimit,
    cursor: optionalQueryValue,
  });

  return [
    {
      method: "GET",
      path: "/v1/transactions",
      access: "merchant",
      scopes: SCOPES.read,
      handler: async (ctx) => {
        const query = parseInput(listQuery, ctx.query, "query");
        const type = query.type as TransactionType | undefined;
        if (type !== undefined && query.status !== undefined && !sources[type].statuses.includes(query.status)) {
          throw validationFailure([{ field: "status", problem: `must be one of ${sources[type].statuses.join(", ")} for type ${type}` }]);
        }
        if (query.from !== undefined && query.to !== undefined && query.from >= query.to) {
          throw validationFailure([{ field: "to", problem: "must be later than from" }]);
        }
        const filter: ListFilter = { merchantId: authenticatedMerchantId(ctx), status: query.status, from: query.from, to: query.to, limit: query.limit, cursor: query.cursor };
        // One kind: that service's page and cursor as they are. Every kind: merged, newest first.
        const page = type === undefined ? await mergedPage(sources, filter) : await sources[type].list(filter);
        ctx.body = success(page, deps.clock);
      },
    },
  ];
}
