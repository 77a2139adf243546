import type { DepositService } from "@payments/contracts/deposit";
import type { Rpc } from "@payments/kit";
import type { DepositContext } from "../context.js";
import { importStatement } from "../statement-import.js";

/** A bank statement file, every credit reported once (src/statement-import.ts). */
export function importStatementRpc(ctx: DepositContext): Rpc<typeof DepositService, "importStatement"> {
  return {
    async importStatement(req) {
      const counts = await importStatement(ctx, req.format, req.content, req.fileName);
      return counts;
    },
  };
}
