import { fromBinary } from "@bufbuild/protobuf";
import { WithdrawalStatus, WithdrawalStatusChangedSchema, type WithdrawalStatusChanged } from "@payments/contracts/payout";
import { newId, type RunningServices } from "@payments/kit";
import type { BankConnector, PayoutInstruction, PayoutResult } from "../src/bank-connector.js";
import type { PayoutContext } from "../src/context.js";
import { post } from "../src/ledger.js";
import { SANDBOX_OUTCOMES } from "../src/sandbox-connector.js";
import type { WithdrawalRow } from "../src/store.js";
import { turkishIban } from "@payments/testing";
import type { Knex } from "knex";

// What the payout worker tests share. The bank connector is the one test double: a bank
// that records every send, answers like the sandbox bank, and answers a key it has seen
// with the first answer it gave (the idempotency the connector contract promises).

export interface ConnectorBehaviour {
  /** Milliseconds before answering. */
  delayMs?: () => number;
  /** Throw instead of answering (a network error): given the key's send count so far, this one included. */
  throws?: (instruction: PayoutInstruction, sendNumber: number) => boolean;
  /** Never answer until `releaseHung()`: a worker that dies after handing the withdrawal over. */
  hangs?: (instruction: PayoutInstruction, sendNumber: number) => boolean;
}

export interface RecordedSend {
  connector: string;
  instruction: PayoutInstruction;
}

export class RecordingBank {
  readonly sends: RecordedSend[] = [];
  private readonly counts = new Map<string, number>();
  private readonly answers = new Map<string, PayoutResult>();
  private readonly hung: Array<() => void> = [];

  /** A connector in front of this bank, named after the replica that uses it. */
  connector(name: string, behaviour: ConnectorBehaviour = {}): BankConnector {
    return {
      name,
      send: async (instruction) => {
        const sendNumber = (this.counts.get(instruction.idempotencyKey) ?? 0) + 1;
        this.counts.set(instruction.idempotencyKey, sendNumber);
        this.sends.push({ connector: name, instruction: { ...instruction } });
        const delay = behaviour.delayMs?.() ?? 0;
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        if (behaviour.hangs?.(instruction, sendNumber)) {
          await new Promise<void>((resolve) => this.hung.push(resolve));
          return this.answer(instruction);
        }
        if (behaviour.throws?.(instruction, sendNumber)) throw new Error(`connect ECONNRESET (test bank, send ${sendNumber} of ${instruction.idempotencyKey})`);
        return this.answer(instruction);
      },
    };
  }

  private answer(instruction: PayoutInstruction): PayoutResult {
    let answer = this.answers.get(instruction.idempotencyKey);
    if (!answer) {
      answer = { ...(SANDBOX_OUTCOMES[instruction.iban] ?? { outcome: "completed" }), bankReference: `TEST-${instruction.idempotencyKey}` };
      this.answers.set(instruction.idempotencyKey, answer);
    }
    return answer;
  }

  /** How many times the bank was asked to pay this key. */
  sendCount(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  sendsBy(connector: string): RecordedSend[] {
    return this.sends.filter((s) => s.connector === connector);
  }

  /** Lets every hung send answer now (late: its worker has long been given up on). */
  releaseHung(): number {
    const waiting = this.hung.splice(0);
    for (const resolve of waiting) resolve();
    return waiting.length;
  }
}

export function payoutContext(services: RunningServices): PayoutContext {
  return services.contexts.get("payout") as PayoutContext;
}

/**
 * Pending withdrawals written the way CreateWithdrawal writes them: per withdrawal, the
 * hold ledger entry and the row, in one transaction (`post` from src/ledger.ts).
 */
export async function insertPendingWithdrawals(
  ctx: PayoutContext,
  merchantId: string,
  amounts: readonly number[],
  iban = turkishIban("0006400000011234567890"),
  sandbox = true,
): Promise<WithdrawalRow[]> {
  const now = ctx.clock.now().getTime();
  const rows: WithdrawalRow[] = amounts.map((amount, i) => ({
    id: newId("wdr"),
    merchant_id: merchantId,
    process_id: `payout-${i + 1}-${newId("p").slice(-8)}`,
    status: "pending",
    amount,
    currency: "TRY",
    bank_id: "",
    account_name: "Ayşe Yılmaz",
    iban,
    user_id: `user-${i + 1}`,
    user_name: "ayse",
    name: "Ayşe Yılmaz",
    failure_reason: null,
    sequence: 1,
    dispatched_at: null,
    dispatch_attempts: 0,
    bank_reference: null,
    awaiting_operator: false,
    sandbox,
    created_at: now,
    updated_at: now,
    completed_at: null,
  }));
  await ctx.db.transaction(async (trx) => {
    for (const row of rows) {
      await post(trx, ctx.clock, { merchantId, currency: row.currency, kind: "withdrawal_hold", availableDelta: -row.amount, heldDelta: row.amount, transactionId: row.id });
      await trx("withdrawals").insert(row);
    }
  });
  return rows;
}

/** Every WithdrawalStatusChanged in the payout database's outbox, decoded, grouped by withdrawal id, in order. */
export async function outboxEventsByWithdrawal(ctx: PayoutContext): Promise<Map<string, Array<WithdrawalStatusChanged & { topic: string }>>> {
  const rows = (await ctx.db("outbox").select("topic", "payload").orderBy("seq")) as Array<{ topic: string; payload: Buffer }>;
  const byWithdrawal = new Map<string, Array<WithdrawalStatusChanged & { topic: string }>>();
  for (const row of rows) {
    const event = fromBinary(WithdrawalStatusChangedSchema, new Uint8Array(row.payload));
    const id = event.withdrawal?.id ?? "";
    byWithdrawal.set(id, [...(byWithdrawal.get(id) ?? []), Object.assign(event, { topic: row.topic })]);
  }
  return byWithdrawal;
}

/** The shape of one withdrawal's events, comparable with deepEqual: [topic suffix, previous status, new status, sequence]. */
export function eventTrail(events: ReadonlyArray<WithdrawalStatusChanged & { topic: string }> | undefined): Array<[string, string, string, number]> {
  return (events ?? []).map((e) => [
    e.topic.replace(/^payout\.v1\./, ""),
    WithdrawalStatus[e.previousStatus],
    WithdrawalStatus[e.withdrawal?.status ?? WithdrawalStatus.UNSPECIFIED],
    Number(e.withdrawal?.sequence ?? 0n),
  ]);
}

export async function withdrawalRows(ctx: PayoutContext, ids: readonly string[]): Promise<WithdrawalRow[]> {
  return (await ctx.db("withdrawals").whereIn("id", ids).orderBy("id")) as WithdrawalRow[];
}

/** The ledger's own sum per kind for a merchant: the balance must always equal it. */
export async function ledgerSums(ctx: PayoutContext, merchantId: string): Promise<{ available: number; held: number }> {
  const row = (await ctx.db("ledger_entries")
    .where({ merchant_id: merchantId, currency: "TRY" })
    .sum({ available: "available_delta", held: "held_delta" })
    .first()) as { available: number | string | null; held: number | string | null };
  return { available: Number(row.available ?? 0), held: Number(row.held ?? 0) };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Counts, from now on, the transactions of `db` that ran a statement matching `statement` (one
 * run outside a transaction counts as one of its own): a transaction is what a connection runs
 * from its BEGIN to its COMMIT or ROLLBACK, as knex's query events show it.
 */
export function transactionsRunning(db: Knex, statement: RegExp): { count: () => number; stop: () => void } {
  const open = new Map<string, number>();
  const matched = new Set<number>();
  let begun = 0;
  let alone = 0;
  const listener = (query: { sql?: string; __knexUid?: string }) => {
    const sql = query.sql ?? "";
    const connection = query.__knexUid ?? "";
    if (/^begin/i.test(sql)) open.set(connection, ++begun);
    else if (/^(commit|rollback)/i.test(sql)) open.delete(connection);
    else if (statement.test(sql)) {
      const transaction = open.get(connection);
      if (transaction === undefined) alone += 1;
      else matched.add(transaction);
    }
  };
  db.on("query", listener);
  return { count: () => matched.size + alone, stop: () => void db.removeListener("query", listener) };
}
