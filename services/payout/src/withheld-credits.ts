import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { WithheldCreditSchema, type WithheldCredit } from "@payments/contracts/payout";
import { isWithheldCreditStatusName, withheldCreditStatusFromProto, withheldCreditStatusToProto, type WithheldCreditStatusName } from "@payments/contracts/statuses";
import { applyStateMove, forUpdate, heldUnderLock, newId, serviceError, type Clock, type StateTable } from "@payments/kit";
import type { Knex } from "knex";
import { post } from "./ledger.js";

/**
 * Withheld credits: completed deposits the ledger did not credit on its own, each waiting for
 * an operator. Today one cause: a sandbox deposit whose merchant is live by the time its
 * completion event arrives (it raced the merchant's switch). Sandbox money must never become a
 * live balance by itself, since a live connector would pay it out for real; but the deposit
 * service has completed the deposit and the merchant was told, so the money needs a record an
 * operator can find, decide and answer for, and that reconciliation can name.
 *
 * One record per deposit (the unique deposit_id decides between racing deliveries). A record is
 * decided once: open → credited (the ledger's deposit_credit, the very entry a normal credit
 * would have been, in the same transaction) or open → dismissed (nothing posted).
 */

// The statuses (and the text the `status` column stores) are @payments/contracts/statuses'.
export { WITHHELD_CREDIT_STATUSES, type WithheldCreditStatusName } from "@payments/contracts/statuses";

/** Why a sandbox deposit of a live merchant was withheld, as the record and reconciliation say it. */
export const SANDBOX_DEPOSIT_OF_LIVE_MERCHANT = "sandbox deposit of a live merchant";

export interface WithheldCreditRow {
  id: string;
  deposit_id: string;
  merchant_id: string;
  process_id: string;
  amount: number | string;
  currency: string;
  reason: string;
  status: string;
  resolved_by: string | null;
  resolution: string | null;
  /** The deposit_completed event that was withheld (the first delivery's; a repeat carries the same). */
  event_id: string;
  created_at: number | string;
  resolved_at: number | string | null;
}

export const withheldStatusFromProto = withheldCreditStatusFromProto;

export function withheldRowStatus(row: Pick<WithheldCreditRow, "status" | "id">): WithheldCreditStatusName {
  if (!isWithheldCreditStatusName(row.status)) throw new Error(`withheld credit ${row.id} has an unknown status ${row.status}`);
  return row.status;
}

export function withheldCreditFromRow(row: WithheldCreditRow): WithheldCredit {
  return create(WithheldCreditSchema, {
    id: row.id,
    depositId: row.deposit_id,
    merchantId: row.merchant_id,
    processId: row.process_id,
    amount: BigInt(row.amount),
    currency: row.currency,
    reason: row.reason,
    status: withheldCreditStatusToProto(withheldRowStatus(row)),
    resolvedBy: row.resolved_by ?? "",
    resolution: row.resolution ?? "",
    createdAt: timestampFromMs(Number(row.created_at)),
    resolvedAt: row.resolved_at === null ? undefined : timestampFromMs(Number(row.resolved_at)),
  });
}

// ---------------------------------------------------------------- the consumer's side

export interface WithheldDeposit {
  depositId: string;
  merchantId: string;
  processId: string;
  amount: number;
  currency: string;
  eventId: string;
  reason: string;
}

/**
 * The withheld credit record a deposit's first withholding writes (open, for an operator). The
 * consumer inserts it (src/deposit-credits.ts) only after it found, under the locks of the
 * deposit's balance row, neither a record nor a ledger credit for the deposit: a record is never
 * written beside a credit, which would tell reconciliation the money is missing. Two racing
 * withholdings that got past that meet the unique deposit_id.
 */
export function withheldCreditRow(deposit: WithheldDeposit, now: number): WithheldCreditRow {
  return {
    id: newId("whc"),
    deposit_id: deposit.depositId,
    merchant_id: deposit.merchantId,
    process_id: deposit.processId,
    amount: deposit.amount,
    currency: deposit.currency,
    reason: deposit.reason,
    status: "open",
    resolved_by: null,
    resolution: null,
    event_id: deposit.eventId,
    created_at: now,
    resolved_at: null,
  };
}

/**
 * Inside `trx`: the status of each of these deposits' records, by deposit id (one read, not
 * locking). A deposit with a record that is not credited (open or dismissed) must not be
 * credited by a later delivery (say its merchant counts as sandbox again by then): the decision
 * is the operator's, and a credit beside an open record could be credited a second time from the
 * operator's list. The consumer reads this under the locks of the deposits' balance rows, which
 * every credit and withholding of a deposit takes first, so it sees what any racing one committed.
 */
export async function withheldStatuses(trx: Knex.Transaction, depositIds: readonly string[]): Promise<Map<string, string>> {
  if (depositIds.length === 0) return new Map();
  const rows = await trx("withheld_credits")
    .whereIn("deposit_id", [...new Set(depositIds)])
    .select<Array<Pick<WithheldCreditRow, "deposit_id" | "status">>>("deposit_id", "status");
  return new Map(rows.map((row) => [row.deposit_id, row.status]));
}

// ---------------------------------------------------------------- the operator's decision

export type WithheldDecision = "credit" | "dismiss";

/** What a decision does to the ledger: a credit posts the deposit's deposit_credit, a dismissal nothing. */
export type WithheldEffect = "deposit_credit" | "none";

const DECISIONS: Readonly<Record<WithheldDecision, { to: WithheldCreditStatusName; effect: WithheldEffect }>> = {
  credit: { to: "credited", effect: "deposit_credit" },
  dismiss: { to: "dismissed", effect: "none" },
};

export type WithheldMoveOutcome =
  | { kind: "moved"; from: "open"; to: WithheldCreditStatusName; effect: WithheldEffect }
  | { kind: "refused"; status: WithheldCreditStatusName; message: string };

/**
 * The state machine, pure: only an open record is decided, once, to credited (posting the
 * deposit's credit) or dismissed (posting nothing); a decided record refuses every decision,
 * a repeat of its own included. `subject` names the record in the refusal's message.
 */
export function decideWithheld(status: WithheldCreditStatusName, decision: WithheldDecision, subject = "the withheld credit"): WithheldMoveOutcome {
  if (status === "open") return { kind: "moved", from: "open", ...DECISIONS[decision] };
  return { kind: "refused", status, message: `${subject} is ${status}; only an open one can be decided` };
}

/** The withheld credits table as the state-move helper sees it. */
const WITHHELD_CREDITS: StateTable<WithheldCreditRow, WithheldCreditStatusName> = { name: "withheld_credits", id: "id", status: "status", statusOf: withheldRowStatus };

/** The record, or NOT_FOUND. `lock` holds it until the transaction ends. */
export async function getWithheldCreditRow(db: Knex, id: string, options: { lock?: boolean } = {}): Promise<WithheldCreditRow> {
  const query = db("withheld_credits").where({ id }).first();
  const row = (await (options.lock ? forUpdate(db, query) : query)) as WithheldCreditRow | undefined;
  if (!row) throw serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", `no withheld credit ${id}`);
  return row;
}

export interface WithheldResolution {
  id: string;
  decision: WithheldDecision;
  actor: string;
  reason: string;
  /** Who decides in words (callerAttribution: the operator, maker and approver, and their workload), for a credit's ledger entry. */
  attribution?: string;
}

/**
 * Applies an operator's decision inside `trx`: lock the record, decide on its status, the
 * conditional UPDATE … WHERE status = 'open' and, for a credit, the ledger's deposit_credit of
 * the deposit (kind and transaction id as a normal credit, so the ledger's unique index still
 * allows one credit per deposit and CheckLedger finds it). All or nothing; no event. A decided
 * record is refused with INVALID_TRANSACTION_STATE (details.status) and nothing changes.
 */
export async function resolveWithheld(trx: Knex.Transaction, clock: Clock, resolution: WithheldResolution): Promise<WithheldCreditRow> {
  const current = await getWithheldCreditRow(trx, resolution.id, { lock: true });
  const result = await applyStateMove(trx, clock, {
    table: WITHHELD_CREDITS,
    row: current,
    move: resolution.decision,
    decide: (from, decision) => decideWithheld(from, decision, `withheld credit ${current.id}`),
    patch: (_moved, now) => ({ resolved_by: resolution.actor, resolution: resolution.reason, resolved_at: now }),
    effects: async (_row, { from, effect }) => {
      if (effect === "deposit_credit") {
        const entry = await post(trx, clock, {
          merchantId: current.merchant_id,
          currency: current.currency,
          kind: "deposit_credit",
          availableDelta: Number(current.amount),
          heldDelta: 0,
          transactionId: current.deposit_id,
          processId: current.process_id,
          // Who, short enough for the entry's 500 characters; the why stays on the record.
          reason: `withheld credit ${current.id} credited by ${resolution.actor}`,
          actor: resolution.attribution ?? resolution.actor,
        });
        // The consumer never credits a withheld deposit and never withholds a credited one, so a
        // credit here means someone posted one by hand: refuse rather than call the record credited
        // by a decision that posted nothing (the transaction rolls back).
        if (!entry) {
          throw serviceError(
            Code.FailedPrecondition,
            "INVALID_TRANSACTION_STATE",
            `deposit ${current.deposit_id} already has a ledger credit; withheld credit ${current.id} can only be dismissed`,
            { details: { status: from } },
          );
        }
      }
      return getWithheldCreditRow(trx, current.id);
    },
  });
  return heldUnderLock(result, WITHHELD_CREDITS, current).row;
}

/** The records of these deposits, by deposit id (reconciliation), in chunks of `chunk`. */
export async function withheldByDeposit(db: Knex, depositIds: readonly string[], chunk = 500): Promise<Map<string, WithheldCreditRow>> {
  const byDeposit = new Map<string, WithheldCreditRow>();
  // Records are rare (a deposit must race its merchant's switch to live): with none at all, a
  // check of 100,000 credits skips 200 lookups.
  if (depositIds.length === 0 || (await db("withheld_credits").first("id")) === undefined) return byDeposit;
  for (let i = 0; i < depositIds.length; i += chunk) {
    const rows = (await db("withheld_credits").whereIn("deposit_id", depositIds.slice(i, i + chunk))) as WithheldCreditRow[];
    for (const row of rows) byDeposit.set(row.deposit_id, row);
  }
  return byDeposit;
}
