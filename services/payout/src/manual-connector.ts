import type { BankConnector, PayoutResult } from "./bank-connector.js";

/**
 * The live connector for a bank without an integration: it moves no money itself. Every
 * withdrawal it is given is "accepted" and waits, processing, for an operator who pays it in
 * the bank's own portal (by hand, or with `cli withdrawal export`'s bulk-payment CSV) and
 * then completes it with the bank's reference, or fails it (`cli withdrawal complete|fail`).
 * A repeated send answers the same and does nothing, as the connector contract requires.
 */
export function createManualConnector(): BankConnector {
  return {
    name: "manual",
    async send(): Promise<PayoutResult> {
      return { outcome: "accepted" };
    },
  };
}
