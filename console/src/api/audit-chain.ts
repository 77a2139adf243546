import { toJson } from "@bufbuild/protobuf";
import { ListAuditChainResponseSchema } from "@payments/contracts/operator";
import { auditChainPage, MAX_CHAIN_PAGE } from "@payments/access";
import type { ConsoleContext } from "../context.js";
import { badRequest } from "../errors.js";
import type { ConsoleRoute } from "../route.js";
import { apiRoute } from "./body.js";

/** A page of the chain unless the caller asks for fewer. */
const DEFAULT_PAGE = 500;

function integerQuery(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^\d{1,15}$/.test(value) || Number(value) < min || Number(value) > max) throw badRequest("VALIDATION_ERROR", `${name}: a whole number, ${min} to ${max}`);
  return Number(value);
}

/**
 * The console's own audit as its hash chain, for `pnpm cli audit verify --service console`: the
 * rows after `after` (a seq, 0 by default) oldest first, `limit` of them (1-1000, 500 by default),
 * every hashed field as stored and the head read in the same snapshot, as the services'
 * AuditService/ListAuditChain answers (its JSON). Any operator signed in with the CLI reads it.
 */
export function auditChainRoutes(deps: ConsoleContext): ConsoleRoute[] {
  return [
    apiRoute("GET", "/api/audit/chain", "cli", async (ctx) => {
      const after = integerQuery(ctx.query.after, "after", 0, Number.MAX_SAFE_INTEGER, 0);
      const limit = integerQuery(ctx.query.limit, "limit", 1, MAX_CHAIN_PAGE, DEFAULT_PAGE);
      ctx.body = toJson(ListAuditChainResponseSchema, await auditChainPage(deps.db, after, limit));
    }),
  ];
}
