import type { DepositService } from "@payments/contracts/deposit";
import type { Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import type { DepositContext } from "../context.js";
import { importStatement } from "../statement-import.js";

/** A bank statement file, every credit reported once (src/statement-import.ts). */
export function importStatementRpc(ctx: DepositContext): Rpc<typeof DepositService, "importStatement"> {
  return {
    async importStatement(req) {
      // Each transfer records who imported it: the bank integration, or the operator and the workload carrying them.
      const counts = await importStatement(ctx, req.format, req.content, req.fileName, callerAttribution("deposit"));
      return counts;
    },
  };
}
