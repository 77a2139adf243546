import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { DepositService } from "@payments/contracts/deposit";
import type { Clock } from "@payments/kit";
import { DEPOSIT_STATUSES, depositRecord, depositStatusToProto, isDepositStatusName, type DepositRecord } from "@payments/records";
import { z } from "zod";
import { success } from "../envelope.js";
import { callService, validationFailure } from "../errors.js";
import { optionalQueryValue, parseInput, type Route } from "./route.js";

export const TRANSACTION_TYPES = ["deposit", "withdrawal"] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** A record of any kind; withdrawals join the union when the payout service does. */
export type TransactionRecord = DepositRecord;

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
 * One kind of transaction, listed by the service that owns it. Listing without `type` will
 * merge the sources newest first (with a cursor that carries each source's position) once a
 * second one exists; until then it is the deposit source alone.
 */
export interface TransactionSource {
  statuses: readonly string[];
  list(filter: ListFilter): Promise<TransactionPage>;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

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

const LIMIT_PROBLEM = `must be an integer from 1 to ${MAX_LIMIT}`;

const limit = optionalQueryValue.transform((value, ctx) => {
  if (value === undefined) return DEFAULT_LIMIT;
  const n = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) {
    ctx.addIssue({ code: "custom", message: LIMIT_PROBLEM });
    return z.NEVER;
  }
  return n;
});

export function transactions(deps: { deposits: Pick<Client<typeof DepositService>, "listDeposits">; clock: Clock; publicBaseUrl: string }): Route[] {
  const sources: Partial<Record<TransactionType, TransactionSource>> = {
    deposit: depositSource(deps),
    // withdrawal: from the payout service, when it exists.
  };
  const knownStatuses = [...new Set(Object.values(sources).flatMap((s) => s.statuses))];

  // Unknown parameters are ignored; a known one given twice is a VALIDATION_ERROR.
  const listQuery = z.object({
    type: optionalQueryValue.superRefine((type, ctx) => {
      if (type === undefined) return;
      if (!(TRANSACTION_TYPES as readonly string[]).includes(type)) ctx.addIssue({ code: "custom", message: `must be one of ${TRANSACTION_TYPES.join(", ")}` });
      else if (!sources[type as TransactionType]) ctx.addIssue({ code: "custom", message: `${type}s are not available yet` });
    }),
    status: optionalQueryValue.refine((s) => s === undefined || knownStatuses.includes(s), `must be one of ${knownStatuses.join(", ")}`),
    from: time,
    to: time,
    limit,
    cursor: optionalQueryValue,
  });

  return [
    {
      method: "GET",
      path: "/v1/transactions",
      access: "merchant",
      handler: async (ctx) => {
        const merchant = ctx.state.merchant;
        if (!merchant) throw new Error("transactions needs an authenticated merchant");
        const query = parseInput(listQuery, ctx.query, "query");
        // Absent type: deposits, the only kind so far (see TransactionSource).
        const type = (query.type ?? "deposit") as TransactionType;
        const source = sources[type];
        if (!source) throw new Error(`no source for ${type}`);
        if (query.status !== undefined && !source.statuses.includes(query.status)) {
          throw validationFailure([{ field: "status", problem: `must be one of ${source.statuses.join(", ")} for type ${type}` }]);
        }
        if (query.from !== undefined && query.to !== undefined && query.from >= query.to) {
          throw validationFailure([{ field: "to", problem: "must be later than from" }]);
        }
        const page = await source.list({ merchantId: merchant.merchantId, status: query.status, from: query.from, to: query.to, limit: query.limit, cursor: query.cursor });
        ctx.body = success(page, deps.clock);
      },
    },
  ];
}
