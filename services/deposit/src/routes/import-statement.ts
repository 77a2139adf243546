import type { DepositContext } from "../context.js";
import { importStatement } from "../statement-import.js";
import type { Rpc } from "./index.js";

/** A bank statement file, every credit reported once (src/statement-import.ts). */
export function importStatementRpc(ctx: DepositContext): Rpc<"importStatement"> {
  return {
    async importStatement(req) {
      const counts = await importStatement(ctx, req.format, req.content, req.fileName);
      return counts;
    },
  };
}
