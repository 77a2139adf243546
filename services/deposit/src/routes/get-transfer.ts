import { Code } from "@connectrpc/connect";
import type { DepositService } from "@payments/contracts/deposit";
import { parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { identifier } from "../requests.js";
import { transferFromRow, type TransferActionRow, type TransferRow } from "../store.js";

const request = z.object({ transferId: identifier(40) });

/** One transfer for an operator: how it was matched (or why not) and every action taken on it. */
export function getTransfer(ctx: DepositContext): Rpc<typeof DepositService, "getTransfer"> {
  return {
    async getTransfer(req) {
      const { transferId } = parseRequest(request, req);
      const [row, actions] = await Promise.all([
        ctx.db("incoming_transfers").where({ id: transferId }).first() as Promise<TransferRow | undefined>,
        ctx.db("transfer_actions").where({ transfer_id: transferId }).orderBy([{ column: "at" }, { column: "id" }]) as Promise<TransferActionRow[]>,
      ]);
      if (!row) throw serviceError(Code.NotFound, "TRANSFER_NOT_FOUND", `no incoming transfer ${transferId}`);
      return { transfer: transferFromRow(row, actions) };
    },
  };
}
