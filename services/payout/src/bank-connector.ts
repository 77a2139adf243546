/**
 * How payouts leave the system: a bank connector sends one transfer. Real banks plug in
 * behind this interface; the sandbox connector ships (src/sandbox-connector.ts).
 */

export interface PayoutInstruction {
  /** The withdrawal id: the same on every retry, so the bank executes the transfer once. */
  idempotencyKey: string;
  amount: number;
  currency: string;
  /** Electronic format. */
  iban: string;
  accountName: string;
  /** Shown on the recipient's statement: the merchant's process id. */
  description: string;
}

export type PayoutResult =
  /** The money left: the withdrawal completes. */
  | { outcome: "completed"; bankReference?: string }
  /** The bank refused it: the withdrawal fails with this code (ACCOUNT_NOT_FOUND, NAME_MISMATCH, ACCOUNT_CLOSED, …). */
  | { outcome: "failed"; reason: string; bankReference?: string }
  /** The bank took it but has not decided: the withdrawal stays processing until an operator completes or fails it. */
  | { outcome: "accepted"; bankReference?: string };

export interface BankConnector {
  readonly name: string;
  /**
   * Sends one transfer. Must be idempotent on `idempotencyKey`: called again after a
   * crash, it returns the first call's result and moves no more money. Throwing means "did
   * not reach the bank or no answer": the worker retries later with the same key.
   */
  send(instruction: PayoutInstruction): Promise<PayoutResult>;
}
