import { timestampMs } from "@bufbuild/protobuf/wkt";
import { DepositStatus } from "@payments/contracts/deposit";
import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { decodeCursor, encodeCursor, type ListPosition } from "../cursor.js";
import { pageLimit } from "../requests.js";
import { depositFromRow, statusFromProto, type DepositRow } from "../store.js";
import type { Rpc } from "./index.js";

const time = z
  .object({ seconds: z.bigint(), nanos: z.number() })
  .optional()
  .transform((t) => (t === undefined ? undefined : timestampMs({ $typeName: "google.protobuf.Timestamp", ...t })));

const request = z.object({
  merchantId: z.string().max(100, "must be at most 100 characters"),
  status: z
    .number()
    .refine((s) => s === DepositStatus.UNSPECIFIED || statusFromProto(s) !== undefined, "is not a deposit status")
    .transform((s) => statusFromProto(s)),
  createdFrom: time,
  createdTo: time,
  limit: pageLimit(20, 100),
  cursor: z
    .string()
    .transform((text, issue): ListPosition | undefined => {
      if (text === "") return undefined;
      const position = decodeCursor(text);
      if (!position) {
        issue.addIssue({ code: "custom", message: "is not a cursor from a previous response" });
        return z.NEVER;
      }
      return position;
    }),
});

export function listDeposits(ctx: DepositContext): Rpc<"listDeposits"> {
  return {
    async listDeposits(req) {
      const input = parseRequest(request, req);
      const query = ctx.db("deposits").orderBy([
        { column: "created_at", order: "desc" },
        { column: "id", order: "desc" },
      ]);
      if (input.merchantId !== "") query.where({ merchant_id: input.merchantId });
      if (input.status) query.where({ status: input.status });
      if (input.createdFrom !== undefined) query.where("created_at", ">=", input.createdFrom);
      if (input.createdTo !== undefined) query.where("created_at", "<", input.createdTo);
      const after = input.cursor;
      if (after) {
        query.where((q) => q.where("created_at", "<", after.createdAt).orWhere((q2) => q2.where("created_at", after.createdAt).where("id", "<", after.id)));
      }
      const rows = (await query.limit(input.limit + 1)) as DepositRow[];
      const page = rows.slice(0, input.limit);
      const last = page.at(-1);
      return {
        deposits: page.map(depositFromRow),
        nextCursor: rows.length > input.limit && last ? encodeCursor({ createdAt: Number(last.created_at), id: last.id }) : "",
      };
    },
  };
}
