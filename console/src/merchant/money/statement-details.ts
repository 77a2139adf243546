import { timestampMs } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { DepositService } from "@payments/contracts/deposit";
import { PayoutService, type StatementLine } from "@payments/contracts/payout";
import type { MerchantSignedIn } from "../merchant-call.js";

/**
 * What a statement line does not carry but the page shows beside it: the deposit's customer and
 * what it asked for (a short or a larger payment shows both amounts), the withdrawal's account
 * holder, and an adjustment's reason. The payments are asked one by one (a page has at most 100
 * lines, a few at a time); the reason lives on the ledger entry (ListLedgerEntries), read newest
 * first until every adjustment of the page is found or the entries are older than the oldest.
 * A detail that cannot be read is left out: the line itself is the service's and stays.
 */

export interface DepositDetail {
  customerName: string;
  requested: bigint;
  received: bigint;
}

export interface StatementDetails {
  deposits: Map<string, DepositDetail>;
  holders: Map<string, string>;
  reasons: Map<string, string>;
}

/** Payments read at once. */
const AT_ONCE = 8;
/** Ledger entries per page, and pages at most, while adjustments' reasons are looked for. */
const LEDGER_PAGE = 500;
const LEDGER_PAGES = 20;

async function eachAtMost<V>(items: readonly V[], limit: number, work: (item: V) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A call whose refusal only leaves its detail out (a bug is thrown on). */
async function quietly<R>(call: () => Promise<R>): Promise<R | undefined> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ConnectError) return undefined;
    throw err;
  }
}

async function adjustmentReasons(who: MerchantSignedIn, currency: string, lines: readonly StatementLine[]): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  const wanted = new Set(lines.filter((l) => l.kind === "adjustment").map((l) => l.entryId));
  if (wanted.size === 0) return reasons;
  const oldest = Math.min(...lines.filter((l) => wanted.has(l.entryId)).map((l) => (l.createdAt ? timestampMs(l.createdAt) : 0)));
  const payouts = who.client(PayoutService);
  let cursor = "";
  for (let page = 0; page < LEDGER_PAGES && wanted.size > 0; page++) {
    const res = await quietly(() => payouts.listLedgerEntries({ merchantId: who.user.merchantId, currency, limit: LEDGER_PAGE, cursor }));
    if (!res) break;
    for (const e of res.entries) {
      if (!wanted.delete(e.id)) continue;
      if (e.reason) reasons.set(e.id, e.reason);
    }
    const last = res.entries.at(-1);
    if (res.nextCursor === "" || (last?.createdAt && timestampMs(last.createdAt) < oldest)) break;
    cursor = res.nextCursor;
  }
  return reasons;
}

/** The details of one page of a statement's lines. */
export async function statementDetails(who: MerchantSignedIn, currency: string, lines: readonly StatementLine[]): Promise<StatementDetails> {
  const merchantId = who.user.merchantId;
  const deposits = new Map<string, DepositDetail>();
  const holders = new Map<string, string>();
  const depositIds = [...new Set(lines.filter((l) => l.kind === "deposit_credit").map((l) => l.transactionId))];
  const withdrawalIds = [...new Set(lines.filter((l) => l.kind.startsWith("withdrawal_")).map((l) => l.transactionId))];
  const reasons = adjustmentReasons(who, currency, lines);
  await eachAtMost([...depositIds.map((id) => ({ kind: "deposit" as const, id })), ...withdrawalIds.map((id) => ({ kind: "withdrawal" as const, id }))], AT_ONCE, async ({ kind, id }) => {
    if (kind === "deposit") {
      const d = (await quietly(() => who.client(DepositService).getDeposit({ merchantId, key: { case: "depositId", value: id } })))?.deposit;
      if (d) deposits.set(id, { customerName: d.customer?.name ?? "", requested: d.requestedAmount, received: d.amount });
    } else {
      const w = (await quietly(() => who.client(PayoutService).getWithdrawal({ merchantId, key: { case: "withdrawalId", value: id } })))?.withdrawal;
      if (w) holders.set(id, w.accountName);
    }
  });
  return { deposits, holders, reasons: await reasons };
}
