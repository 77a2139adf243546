import { formatMajor, repeatableRead } from "@payments/kit";
import type { Knex } from "knex";
import type { DepositRow, TransferRow } from "./store.js";
import { isTransferStatus, suspenseHeldIn } from "./transfer-state.js";

/**
 * Where the money that arrived went, per receiving account and currency: every transfer
 * reported in the period was credited to a merchant (the deposit it completed), is held in
 * suspense (unmatched, in review), or was returned (or is being returned) to its sender.
 * received = credited + suspense + returned, and each transfer's suspense entries must sum
 * to what its status says it holds. Anything else is listed as a discrepancy.
 */
export interface AccountFigures {
  iban: string;
  currency: string;
  received: number;
  credited: number;
  suspense: number;
  returned: number;
  difference: number;
  discrepancies: string[];
}

export interface Credit {
  depositId: string;
  merchantId: string;
  amount: number;
  currency: string;
}

export interface Reconciliation {
  accounts: AccountFigures[];
  credits: Credit[];
}

/** What a transfer in this status holds in suspense (transfer-state.ts): all of it while open, nothing otherwise. */
function expectedSuspense(transfer: TransferRow): number {
  return isTransferStatus(transfer.status) ? suspenseHeldIn(transfer.status) * Number(transfer.amount) : 0;
}

export function reconcile(db: Knex, period: { from?: number; to?: number }): Promise<Reconciliation> {
  // One transaction for every read, at REPEATABLE READ (the service's sessions run at READ
  // COMMITTED): a return settling between them must not show as a discrepancy.
  return db.transaction((trx) => reconcileIn(trx, period), repeatableRead(db));
}

async function reconcileIn(db: Knex, period: { from?: number; to?: number }): Promise<Reconciliation> {
  const query = db("incoming_transfers").orderBy([{ column: "iban" }, { column: "currency" }, { column: "reported_at" }, { column: "id" }]);
  if (period.from !== undefined) query.where("reported_at", ">=", period.from);
  if (period.to !== undefined) query.where("reported_at", "<", period.to);
  const transfers = (await query) as TransferRow[];
  const ids = transfers.map((t) => t.id);
  const depositIds = [...new Set(transfers.map((t) => t.deposit_id).filter((id): id is string => id !== null))];

  const suspenseByTransfer = new Map<string, number>();
  const deposits = new Map<string, DepositRow>();
  // In chunks: an IN list of every transfer of a long period would be one huge statement.
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db("suspense_entries")
      .whereIn("transfer_id", ids.slice(i, i + 500))
      .select("transfer_id")
      .sum({ amount: "amount" })
      .groupBy<Array<{ transfer_id: string; amount: number | string }>>("transfer_id");
    for (const row of rows) suspenseByTransfer.set(row.transfer_id, Number(row.amount));
  }
  for (let i = 0; i < depositIds.length; i += 500) {
    const rows = (await db("deposits").whereIn("id", depositIds.slice(i, i + 500))) as DepositRow[];
    for (const row of rows) deposits.set(row.id, row);
  }

  const accounts = new Map<string, AccountFigures>();
  const credits: Credit[] = [];
  for (const transfer of transfers) {
    const key = `${transfer.iban} ${transfer.currency}`;
    let figures = accounts.get(key);
    if (!figures) {
      figures = { iban: transfer.iban, currency: transfer.currency, received: 0, credited: 0, suspense: 0, returned: 0, difference: 0, discrepancies: [] };
      accounts.set(key, figures);
    }
    const amount = Number(transfer.amount);
    figures.received += amount;
    const held = suspenseByTransfer.get(transfer.id) ?? 0;
    if (held !== expectedSuspense(transfer)) {
      figures.discrepancies.push(`transfer ${transfer.id} is ${transfer.status} but its suspense entries hold ${formatMajor(held, transfer.currency)}, not ${formatMajor(expectedSuspense(transfer), transfer.currency)}`);
    }
    switch (transfer.status) {
      case "matched": {
        const deposit = transfer.deposit_id ? deposits.get(transfer.deposit_id) : undefined;
        if (!deposit || deposit.status !== "completed" || deposit.transfer_id !== transfer.id) {
          figures.discrepancies.push(`transfer ${transfer.id} is matched to deposit ${transfer.deposit_id ?? "(none)"}, which it did not complete`);
          break;
        }
        const credited = Number(deposit.amount);
        figures.credited += credited;
        credits.push({ depositId: deposit.id, merchantId: deposit.merchant_id, amount: credited, currency: deposit.currency });
        if (credited !== amount) figures.discrepancies.push(`deposit ${deposit.id} was credited ${formatMajor(credited, deposit.currency)} from transfer ${transfer.id} of ${formatMajor(amount, transfer.currency)}`);
        break;
      }
      case "unmatched":
      case "review":
        figures.suspense += amount;
        break;
      case "returning":
      case "returned":
        figures.returned += amount;
        break;
      default:
        figures.discrepancies.push(`transfer ${transfer.id} has an unknown status ${String(transfer.status)}`);
    }
  }
  const list = [...accounts.values()];
  for (const figures of list) figures.difference = figures.received - figures.credited - figures.suspense - figures.returned;
  return { accounts: list, credits };
}
