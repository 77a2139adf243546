import { randomInt } from "node:crypto";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { DepositStatus } from "@payments/contracts/deposit";
import { errorInfo } from "@payments/kit";
import { bankIban } from "@payments/testing";
import type { Merchant } from "./load.js";
import { createDeposits, inParallel, type RunningProduct } from "./product.js";

/*
 * The deposits of issue 18's scenarios (bank-reports.ts runs them): the bench's own bank and its
 * two receiving accounts, the pending deposits made on them and the check that no other unpaid
 * deposit is there, the exactly-once check after the load, and the cancelling of the unpaid.
 */

export interface ReportAccounts {
  bankId: string;
  bankCode: string;
  accounts: Array<{ id: string; iban: string }>;
  /** Date.now() just before the bank was made: every deposit on its accounts is younger. */
  createdAtMs: number;
}

export interface ReportDeposit {
  merchantIndex: number;
  id: string;
  iban: string;
  amount: bigint;
  currency: string;
  reference: string;
  customerName: string;
}

export interface CompletionCheck {
  deposits: number;
  /** Completed, with the amount asked for, after exactly one change. */
  completed: number;
  /** With exactly one deposit_credit ledger entry of its amount. */
  creditedOnce: number;
  /** Last answer → every deposit whose call succeeded seen credited in the ledger (or the wait's end); polled every second. */
  drainSeconds: number;
  /** Deposits not completed exactly once (any reason). */
  notCompletedOnce: number;
  /** The first 50 of them, each with its reasons. */
  mismatches: string[];
  ok: boolean;
}

const CUSTOMER_NAMES = [
  "Ayşe Yılmaz",
  "Mehmet Öztürk",
  "Fatma Şahin",
  "Mustafa Çelik",
  "Emine Doğan",
  "Ahmet Kılıç",
  "Hatice Aydın",
  "İbrahim Arslan",
  "Zeynep Güneş",
  "Hüseyin Koç",
  "Elif Kaya",
  "Ömer Erdoğan",
];

/** How long one call of the scenarios (a payment, a read of the check) may take. */
export const CALL_TIMEOUT_MS = 30_000;

/** After the last credit of a successful call, how long no further credit may come before the deposits are read back. */
const QUIET_MS = 3_000;

/** A Turkish IBAN (ISO 13616 checksum) with a made-up bank code and a random account number. */
function benchIban(): string {
  return bankIban("00990", `9${String(randomInt(10_000_000)).padStart(7, "0")}${String(randomInt(100_000_000)).padStart(8, "0")}`);
}

/**
 * The bench's own bank with exactly two active sandbox receiving accounts. Its code is not a
 * 1..5-digit EFT code, so the catalog accepts any IBAN for it, and no other bank has it.
 */
export async function createReportAccounts(product: RunningProduct, tag: string): Promise<ReportAccounts> {
  const { bankCatalog } = product.clients;
  const createdAtMs = Date.now() - 1_000;
  const code = `BENCH${tag}`.toUpperCase().replace(/[^A-Z0-9]/g, "").slice(0, 20);
  const { bank } = await bankCatalog.createBank({ name: `Bench Bankası ${tag}`, code, logoUrl: "", minAmount: 1_000n, maxAmount: 5_000_000n, active: true });
  if (!bank) throw new Error("CreateBank answered without a bank");
  const accounts: ReportAccounts["accounts"] = [];
  for (const k of [1, 2]) {
    for (let attempt = 1; ; attempt++) {
      try {
        const { account } = await bankCatalog.createReceivingAccount({ bankId: bank.id, accountName: `Bench Tahsilat ${k}`, iban: benchIban(), fastEnabled: false, active: true, sandbox: true });
        if (!account) throw new Error("CreateReceivingAccount answered without an account");
        accounts.push({ id: account.id, iban: account.iban });
        break;
      } catch (err) {
        if (errorInfo(err).reason === "IBAN_TAKEN" && attempt < 5) continue;
        throw err;
      }
    }
  }
  const { accounts: listed } = await bankCatalog.listReceivingAccounts({ bankId: bank.id, sandbox: true });
  const active = listed
    .filter((a) => a.active)
    .map((a) => a.id)
    .sort();
  const ours = accounts.map((a) => a.id).sort();
  if (active.join() !== ours.join()) {
    throw new Error(`bank ${bank.id} should have exactly the bench's two active sandbox accounts (${ours.join(", ")}); the catalog lists ${active.join(", ") || "none"}`);
  }
  return { bankId: bank.id, bankCode: code, accounts, createdAtMs };
}

/** `count` pending deposits with the bench bank's id (the merchants' POST /v1/deposit), each assigned one of its two accounts; the two accounts in turn. */
export async function createReportDeposits(
  product: RunningProduct,
  merchants: readonly Merchant[],
  accounts: ReportAccounts,
  count: number,
  tag: string,
): Promise<{ deposits: ReportDeposit[]; perSecond: number }> {
  const t0 = performance.now();
  const made = await createDeposits(product, merchants, count, tag, Infinity, {
    bankId: accounts.bankId,
    // Each of another amount: only the reference may tell them apart, and it does.
    amount: (n) => 25_000n + BigInt(n),
    customerName: (n) => CUSTOMER_NAMES[n % CUSTOMER_NAMES.length]!,
  });
  const perSecond = Math.round(made.length / ((performance.now() - t0) / 1000));
  const byIban = new Map(accounts.accounts.map((a) => [a.iban, [] as ReportDeposit[]]));
  for (const deposit of made) {
    const iban = deposit.iban;
    const list = byIban.get(iban);
    if (!list || deposit.bankId !== accounts.bankId || deposit.status !== "pending") {
      throw new Error(`deposit ${deposit.id} (${deposit.status}, bank ${deposit.bankId}) was assigned ${iban || "no account"}, not one of the bench bank's two accounts`);
    }
    list.push({ merchantIndex: deposit.merchantIndex, id: deposit.id, iban, amount: deposit.requestedAmount, currency: deposit.currency, reference: deposit.reference, customerName: deposit.customerName });
  }
  const lists = [...byIban.values()];
  const deposits: ReportDeposit[] = [];
  for (let k = 0; deposits.length < made.length; k++) for (const list of lists) if (k < list.length) deposits.push(list[k]!);
  return { deposits, perSecond };
}

/**
 * Problems if any unpaid deposit other than `deposits` is assigned to the two accounts (every
 * deposit made since the accounts exist is read, across merchants).
 */
export async function othersOnTheAccounts(product: RunningProduct, accounts: ReportAccounts, deposits: readonly ReportDeposit[]): Promise<string[]> {
  const ours = new Set(deposits.map((d) => d.id));
  const ibans = new Set(accounts.accounts.map((a) => a.iban));
  const problems: string[] = [];
  let seen = 0;
  let cursor = "";
  do {
    const page = await product.clients.deposits.listDeposits({ allMerchants: true, createdFrom: timestampFromMs(accounts.createdAtMs), limit: 100, cursor });
    for (const d of page.deposits) {
      const iban = d.assignedAccount?.iban ?? "";
      if (!ibans.has(iban)) continue;
      if (ours.has(d.id)) seen++;
      else if (d.status === DepositStatus.PENDING || d.status === DepositStatus.EXPIRED) problems.push(`${d.id} (${DepositStatus[d.status]}) is also on ${iban}`);
    }
    cursor = page.nextCursor;
  } while (cursor !== "");
  if (seen !== ours.size) problems.push(`only ${seen} of the ${ours.size} deposits made were listed on the two accounts`);
  return problems;
}

/** A read the busy product may time out: up to three tries. */
async function withRetries<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/**
 * Waits until every deposit whose call succeeded has its deposit_credit in the payout ledger
 * and no credit came for QUIET_MS (or `timeoutMs` after the last answer), then reads the
 * deposits back; see CompletionCheck. One line per
 * deposit that was not completed exactly once, with every reason.
 */
export async function checkCompletedOnce(
  product: RunningProduct,
  merchants: readonly Merchant[],
  deposits: readonly ReportDeposit[],
  answeredOk: ReadonlySet<string>,
  sinceMs: number,
  lastAnswerAt: number,
  timeoutMs: number,
): Promise<CompletionCheck> {
  const byMerchant = new Map<number, ReportDeposit[]>();
  for (const d of deposits) {
    const list = byMerchant.get(d.merchantIndex) ?? [];
    list.push(d);
    byMerchant.set(d.merchantIndex, list);
  }
  const merchantIndexes = [...byMerchant.keys()];
  const credits = new Map<string, bigint[]>();
  const readCredits = async (merchantIndex: number) => {
    const own = byMerchant.get(merchantIndex)!;
    const ids = new Set(own.map((d) => d.id));
    const found = new Map<string, bigint[]>();
    let cursor = "";
    // Newest first: stop at the entries older than the deposits (less a margin).
    outer: do {
      const page = await product.clients.payouts.listLedgerEntries({ merchantId: merchants[merchantIndex]!.merchantId, limit: 500, cursor }, { timeoutMs: CALL_TIMEOUT_MS });
      for (const e of page.entries) {
        if (e.createdAt && timestampMs(e.createdAt) < sinceMs - 5_000) break outer;
        if (e.kind !== "deposit_credit" || !ids.has(e.transactionId)) continue;
        const list = found.get(e.transactionId) ?? [];
        list.push(e.availableDelta);
        found.set(e.transactionId, list);
      }
      cursor = page.nextCursor;
    } while (cursor !== "");
    for (const d of own) credits.set(d.id, found.get(d.id) ?? []);
  };
  const uncredited = (m: number) => byMerchant.get(m)!.some((d) => answeredOk.has(d.id) && (credits.get(d.id)?.length ?? 0) === 0);
  // Drained: every deposit whose call succeeded is credited, and no credit came for QUIET_MS
  // (a call that failed at the caller, a 504, may still complete in the service meanwhile).
  const deadline = lastAnswerAt + timeoutMs;
  let drainedAt: number | undefined;
  let lastTotal = -1;
  let lastChange = performance.now();
  let readFailures = 0;
  for (;;) {
    // A product still busy with the backlog may not answer a read in time: that round is read again.
    await inParallel(merchantIndexes.length, 8, (k) =>
      readCredits(merchantIndexes[k]!).catch(() => {
        readFailures++;
      }),
    );
    const now = performance.now();
    let total = 0;
    for (const c of credits.values()) total += c.length;
    if (total !== lastTotal) {
      lastTotal = total;
      lastChange = now;
    }
    if (drainedAt === undefined && !merchantIndexes.some(uncredited)) drainedAt = now;
    if ((drainedAt !== undefined && now - lastChange >= QUIET_MS) || now > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }

  const stored = new Map<string, { status: DepositStatus; amount: bigint; sequence: bigint }>();
  await inParallel(merchantIndexes.length, 8, async (k) => {
    const merchantIndex = merchantIndexes[k]!;
    let cursor = "";
    do {
      const page = await withRetries(() =>
        product.clients.deposits.listDeposits({ merchantId: merchants[merchantIndex]!.merchantId, createdFrom: timestampFromMs(sinceMs - 5_000), limit: 100, cursor }, { timeoutMs: CALL_TIMEOUT_MS }),
      );
      for (const d of page.deposits) stored.set(d.id, { status: d.status, amount: d.amount, sequence: d.sequence });
      cursor = page.nextCursor;
    } while (cursor !== "");
  });

  const mismatches: string[] = [];
  let completed = 0;
  let creditedOnce = 0;
  for (const d of deposits) {
    const reasons: string[] = [];
    const s = stored.get(d.id);
    if (!s) reasons.push("not listed");
    else if (s.status !== DepositStatus.COMPLETED) reasons.push(`${DepositStatus[s.status]}, not COMPLETED`);
    else if (s.amount !== d.amount) reasons.push(`completed with ${s.amount}, not ${d.amount}`);
    else if (s.sequence !== 2n) reasons.push(`completed after ${s.sequence - 1n} changes, not one`);
    else completed++;
    const c = credits.get(d.id) ?? [];
    if (c.length === 0) reasons.push(answeredOk.has(d.id) ? `no deposit_credit in the ledger ${Math.round(timeoutMs / 1000)} s after the last answer` : "no deposit_credit");
    else if (c.length > 1) reasons.push(`credited ${c.length} times (${c.join(", ")})`);
    else if (c[0] !== d.amount) reasons.push(`credited ${c[0]}, not ${d.amount}`);
    else creditedOnce++;
    if (reasons.length > 0) mismatches.push(`${d.id}${answeredOk.has(d.id) ? "" : " (its call failed)"}: ${reasons.join(", ")}`);
  }
  return {
    deposits: deposits.length,
    completed,
    creditedOnce,
    drainSeconds: Math.round(Math.max(0, (drainedAt ?? deadline) - lastAnswerAt) / 100) / 10,
    notCompletedOnce: mismatches.length,
    mismatches: [...(readFailures > 0 ? [`${readFailures} ledger reads timed out while draining (read again)`] : []), ...mismatches.slice(0, 50)],
    ok: mismatches.length === 0,
  };
}

/**
 * Cancels the deposits whose payment failed (CancelDeposit, pending → cancelled), so they are
 * no candidates of the next set's transfers; one completed after all (a call that timed out
 * but committed) refuses and is left alone. Returns how many were cancelled.
 */
export async function cancelUnpaid(product: RunningProduct, merchants: readonly Merchant[], deposits: readonly ReportDeposit[]): Promise<number> {
  const cancelled = await inParallel(deposits.length, 8, async (k) => {
    const d = deposits[k]!;
    try {
      await product.clients.deposits.cancelDeposit({ merchantId: merchants[d.merchantIndex]!.merchantId, depositId: d.id, allMerchants: false });
      return 1;
    } catch {
      return 0;
    }
  });
  return cancelled.reduce<number>((a, b) => a + b, 0);
}
