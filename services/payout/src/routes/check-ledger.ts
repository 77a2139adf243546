import type { PayoutService } from "@payments/contracts/payout";
import { formatMajor, isMysql, parseRequest, validationError, type Rpc } from "@payments/kit";
import type { Knex } from "knex";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { identifier, merchantScope, scopeFields } from "../requests.js";
import { withheldByDeposit, withheldRowStatus, type WithheldCreditRow } from "../withheld-credits.js";

/**
 * The merchant ledger's side of reconciliation. Two questions, answered from one snapshot so
 * a posting racing the check cannot show up as a difference:
 *
 * - Is every balance row the running sum of its ledger entries? `post` changes both in one
 *   transaction, so a difference means something wrote one without the other (a hand-made
 *   SQL fix, a restore of one table, a bug).
 * - Was every deposit the deposit service completed by a transfer credited exactly once,
 *   with its amount, to its merchant? The credits come from GetReconciliation; the deposit
 *   service cannot see the ledger and the ledger cannot see the bank, so only the two together
 *   show money received but never credited (or credited wrongly).
 *
 * A deposit whose credit the consumer withheld (src/withheld-credits.ts: a sandbox deposit of a
 * live merchant) has no ledger credit on purpose. It is still a discrepancy, since the deposit
 * service counts it credited and no balance holds it, but one that says so: withheld and open
 * (waiting for an operator), or dismissed by whom and why. Once an operator credits it, the
 * ledger's credit is checked like any other.
 *
 * Not asked: ledger credits of deposits missing from the list. The list covers a period of
 * reported transfers while the ledger covers all time, so "not in the list" is not wrong by
 * itself; it would need the caller to say the list is complete, which no caller can yet.
 *
 * A credit completed moments before may show as missing until this service has consumed the
 * deposit's completion event; asking again a little later tells a lag from a loss.
 */

/** Credits per call: a month of a busy gateway, still one message of a few MB. */
export const CHECK_LEDGER_MAX_CREDITS = 100_000;

/** Deposit ids per IN (...) query: well under SQLite's and MySQL's placeholder limits, and few round trips. */
const CHUNK = 500;

const credit = z.object({
  depositId: identifier(100),
  merchantId: identifier(100),
  amount: z
    .bigint()
    .refine((v) => v >= 1n && v <= BigInt(Number.MAX_SAFE_INTEGER), `must be a positive integer in the smallest currency unit, at most ${Number.MAX_SAFE_INTEGER}`)
    .transform((v) => Number(v)),
  // Not limited to the configured currencies: a currency no longer offered still has history.
  currency: z
    .string()
    .trim()
    .transform((c) => (c === "" ? "TRY" : c.toUpperCase()))
    .refine((c) => /^[A-Z]{3}$/.test(c), "must be a three-letter currency code"),
});

const request = z.object({
  ...scopeFields,
  credits: z.array(credit).max(CHECK_LEDGER_MAX_CREDITS, `at most ${CHECK_LEDGER_MAX_CREDITS} per call; check a shorter period`),
});

type Credit = z.output<typeof credit>;

interface MerchantCheck {
  merchantId: string;
  currency: string;
  available: number;
  held: number;
  ledgerAvailable: number;
  ledgerHeld: number;
  balanced: boolean;
}

interface LedgerCredit {
  merchant_id: string;
  currency: string;
  available_delta: number | string;
  held_delta: number | string;
  transaction_id: string;
}

const key = (merchantId: string, currency: string) => `${merchantId}\u0000${currency}`;

/** Every balance row and every merchant and currency with entries, each against its entries' sums. */
async function merchantChecks(trx: Knex.Transaction): Promise<MerchantCheck[]> {
  const balances = await trx("balances").select<Array<{
    merchant_id: string;
    currency: string;
    available: number | string;
    held: number | string;
  }>>("merchant_id", "currency", "available", "held");
  // SUM is DECIMAL on MySQL (a string from the driver).
  const sums = await trx("ledger_entries")
    .select("merchant_id", "currency")
    .sum({ available: "available_delta", held: "held_delta" })
    .groupBy<Array<{ merchant_id: string; currency: string; available: number | string | null; held: number | string | null }>>("merchant_id", "currency");
  const checks = new Map<string, MerchantCheck>();
  const at = (merchantId: string, currency: string): MerchantCheck => {
    const k = key(merchantId, currency);
    let check = checks.get(k);
    if (!check) {
      check = { merchantId, currency, available: 0, held: 0, ledgerAvailable: 0, ledgerHeld: 0, balanced: true };
      checks.set(k, check);
    }
    return check;
  };
  for (const row of balances) {
    const check = at(row.merchant_id, row.currency);
    check.available = Number(row.available);
    check.held = Number(row.held);
  }
  for (const row of sums) {
    const check = at(row.merchant_id, row.currency);
    check.ledgerAvailable = Number(row.available ?? 0);
    check.ledgerHeld = Number(row.held ?? 0);
  }
  const all = [...checks.values()];
  for (const c of all) c.balanced = c.available === c.ledgerAvailable && c.held === c.ledgerHeld;
  return all.sort((a, b) => (a.merchantId < b.merchantId ? -1 : a.merchantId > b.merchantId ? 1 : a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

/** The ledger's deposit_credit entries of these deposits, by deposit id, in chunks (never a query per credit). */
async function ledgerCredits(trx: Knex.Transaction, depositIds: readonly string[]): Promise<Map<string, LedgerCredit[]>> {
  const byDeposit = new Map<string, LedgerCredit[]>();
  for (let i = 0; i < depositIds.length; i += CHUNK) {
    const rows = await trx("ledger_entries")
      .where({ kind: "deposit_credit" })
      .whereIn("transaction_id", depositIds.slice(i, i + CHUNK))
      .select<LedgerCredit[]>("merchant_id", "currency", "available_delta", "held_delta", "transaction_id");
    for (const row of rows) {
      const list = byDeposit.get(row.transaction_id) ?? [];
      list.push(row);
      byDeposit.set(row.transaction_id, list);
    }
  }
  return byDeposit;
}

/** Kuruş written in lira, exactly: "123.45 TRY". */
const money = (amount: number, currency: string) => formatMajor(amount, currency);

/** How a withheld record differs from the credit the deposit service lists, or "" when it agrees. */
function withheldMismatch(c: Credit, w: WithheldCreditRow): string {
  const problems: string[] = [];
  if (w.merchant_id !== c.merchantId) problems.push(`recorded for merchant ${w.merchant_id}`);
  if (Number(w.amount) !== c.amount || w.currency !== c.currency) problems.push(`recorded with ${money(Number(w.amount), w.currency)}`);
  return problems.length > 0 ? ` (the record differs: ${problems.join(", ")})` : "";
}

/** What a withheld record says of a deposit the ledger has not credited; its status decides. */
function withheldDiscrepancy(c: Credit, expected: string, w: WithheldCreditRow): string {
  const status = withheldRowStatus(w);
  const head = `deposit ${c.depositId}: completed with ${expected}, but its credit is withheld (${w.reason}; withheld credit ${w.id}`;
  const differs = withheldMismatch(c, w);
  switch (status) {
    case "open":
      return `${head}, open: in no balance until an operator credits or dismisses it)${differs}`;
    case "dismissed":
      return `${head}, dismissed by ${w.resolved_by ?? "?"}: ${w.resolution ?? ""}; in no balance)${differs}`;
    case "credited":
      return `deposit ${c.depositId}: completed with ${expected}; withheld credit ${w.id} says an operator credited it, but the ledger has no credit for it${differs}`;
  }
}

/**
 * What is wrong with each credit against the ledger (and its withheld record, if any), one line
 * per deposit, naming it; and the credits an operator dismissed, which the ledger rightly does
 * not hold (accounted for: listed apart, so reconciliation balances once every one is decided).
 */
function creditDiscrepancies(credits: readonly Credit[], ledger: Map<string, LedgerCredit[]>, withheld: Map<string, WithheldCreditRow>): { discrepancies: string[]; dismissed: string[] } {
  const discrepancies: string[] = [];
  const dismissed: string[] = [];
  const listed = new Map<string, number>();
  for (const c of credits) listed.set(c.depositId, (listed.get(c.depositId) ?? 0) + 1);
  const seen = new Set<string>();
  for (const c of credits) {
    if (seen.has(c.depositId)) continue;
    seen.add(c.depositId);
    const times = listed.get(c.depositId) ?? 1;
    if (times > 1) discrepancies.push(`deposit ${c.depositId}: listed ${times} times in the credits (a deposit is completed once)`);
    const entries = ledger.get(c.depositId) ?? [];
    const expected = `${money(c.amount, c.currency)} to merchant ${c.merchantId}`;
    const record = withheld.get(c.depositId);
    if (entries.length === 0) {
      const line = record ? withheldDiscrepancy(c, expected, record) : `deposit ${c.depositId}: completed with ${expected}, but the ledger has no credit for it`;
      // Dismissed, and the record agrees with the deposit: decided, not a discrepancy.
      if (record && withheldRowStatus(record) === "dismissed" && withheldMismatch(c, record) === "") dismissed.push(line);
      else discrepancies.push(line);
      continue;
    }
    // Credited in the ledger while its record says it is not: the record is stale or the credit was posted by hand.
    if (record && withheldRowStatus(record) !== "credited") {
      discrepancies.push(`deposit ${c.depositId}: credited in the ledger, but withheld credit ${record.id} is ${withheldRowStatus(record)}`);
    }
    if (entries.length > 1) {
      const what = entries.map((e) => `${money(Number(e.available_delta), e.currency)} to merchant ${e.merchant_id}`).join(", ");
      discrepancies.push(`deposit ${c.depositId}: credited ${entries.length} times (${what}), completed once with ${expected}`);
      continue;
    }
    const e = entries[0]!;
    const problems: string[] = [];
    if (e.merchant_id !== c.merchantId) problems.push(`credited to merchant ${e.merchant_id}, not ${c.merchantId}`);
    if (Number(e.available_delta) !== c.amount || e.currency !== c.currency) problems.push(`credited ${money(Number(e.available_delta), e.currency)}, completed with ${money(c.amount, c.currency)}`);
    if (Number(e.held_delta) !== 0) problems.push(`its credit changed held by ${Number(e.held_delta)}`);
    if (problems.length > 0) discrepancies.push(`deposit ${c.depositId} (merchant ${c.merchantId}): ${problems.join("; ")}`);
  }
  return { discrepancies, dismissed };
}

export function checkLedger(ctx: PayoutContext): Rpc<typeof PayoutService, "checkLedger"> {
  return {
    async checkLedger(req) {
      const input = parseRequest(request, req);
      // Operator-only: the answer is every merchant's balances, so a call scoped to one
      // merchant (what the gateway would send for a merchant) is refused, not narrowed.
      if (merchantScope(input) !== undefined) {
        throw validationError("all_merchants", "all_merchants: is required; the ledger check is an operator's, across every merchant");
      }
      const depositIds = [...new Set(input.credits.map((c) => c.depositId))];
      const { merchants, ledger, withheld } = await ctx.db.transaction(
        async (trx) => ({ merchants: await merchantChecks(trx), ledger: await ledgerCredits(trx, depositIds), withheld: await withheldByDeposit(trx, depositIds, CHUNK) }),
        // One snapshot for every read (InnoDB's REPEATABLE READ, named in case a pool sets
        // another default); SQLite's transaction already sees one state.
        isMysql(ctx.db) ? { isolationLevel: "repeatable read" } : undefined,
      );
      return {
        merchants: merchants.map((m) => ({
          merchantId: m.merchantId,
          currency: m.currency,
          available: BigInt(m.available),
          held: BigInt(m.held),
          ledgerAvailable: BigInt(m.ledgerAvailable),
          ledgerHeld: BigInt(m.ledgerHeld),
          balanced: m.balanced,
        })),
        ...creditDiscrepancies(input.credits, ledger, withheld),
      };
    },
  };
}
