import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { pageLimit } from "../requests.js";
import { transferFromRow, type TransferRow } from "../store.js";
import type { Rpc } from "./index.js";

const request = z.object({ limit: pageLimit(100, 500) });

export function listUnmatchedTransfers(ctx: DepositContext): Rpc<"listUnmatchedTransfers"> {
  return {
    async listUnmatchedTransfers(req) {
      const { limit } = parseRequest(request, req);
      const rows = (await ctx.db("incoming_transfers").whereNull("deposit_id").orderBy([{ column: "reported_at" }, { column: "id" }]).limit(limit)) as TransferRow[];
      return { transfers: rows.map(transferFromRow) };
    },
  };
}
