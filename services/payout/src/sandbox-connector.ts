import { setTimeout as sleep } from "node:timers/promises";
import type { BankConnector, PayoutInstruction, PayoutResult } from "./bank-connector.js";

/** The sandbox's test IBANs and what the sandbox bank does with each (decisions.md). */
export const SANDBOX_OUTCOMES: Readonly<Record<string, PayoutResult>> = {
  TR400006200000000000000001: { outcome: "failed", reason: "ACCOUNT_NOT_FOUND" },
  TR130006200000000000000002: { outcome: "failed", reason: "NAME_MISMATCH" },
  TR830006200000000000000003: { outcome: "accepted" },
  TR560006200000000000000004: { outcome: "failed", reason: "ACCOUNT_CLOSED" },
};

/**
 * A bank that moves no money: after `delayMs` it answers by the recipient IBAN's row of
 * the test table, and completes any other valid IBAN. Its answer depends only on the
 * instruction, so a repeated send (same idempotency key) gets the same answer.
 */
export function createSandboxConnector(options: { delayMs: number }): BankConnector {
  return {
    name: "sandbox",
    async send(instruction: PayoutInstruction): Promise<PayoutResult> {
      if (options.delayMs > 0) await sleep(options.delayMs);
      const bankReference = `SANDBOX-${instruction.idempotencyKey}`;
      const outcome = SANDBOX_OUTCOMES[instruction.iban] ?? { outcome: "completed" };
      return { ...outcome, bankReference };
    },
  };
}
