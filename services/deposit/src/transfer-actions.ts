import { newId, type Clock } from "@payments/kit";
import type { Knex } from "knex";

/** What was done to a transfer: who (an operator's name, or "rules"), when, why. */
export type TransferActionName = "matched" | "completed" | "refused" | "return_requested" | "returned" | "return_failed";

export interface TransferAction {
  transferId: string;
  action: TransferActionName;
  actor: string;
  reason: string;
  depositId?: string | null;
}

export async function recordTransferAction(trx: Knex.Transaction, clock: Clock, action: TransferAction): Promise<void> {
  await trx("transfer_actions").insert({
    id: newId("tra"),
    transfer_id: action.transferId,
    action: action.action,
    actor: action.actor,
    reason: action.reason,
    deposit_id: action.depositId ?? null,
    at: clock.now().getTime(),
  });
}

export interface TransferActionRow {
  id: string;
  transfer_id: string;
  action: TransferActionName;
  actor: string;
  reason: string;
  deposit_id: string | null;
  at: number;
}
