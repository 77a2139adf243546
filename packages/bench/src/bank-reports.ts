import { randomInt } from "node:crypto";
import http from "node:http";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { DepositStatus, TransferStatus } from "@payments/contracts/deposit";
import { errorInfo } from "@payments/kit";
import { sign } from "@payments/signing";
import type { Merchant } from "./load.js";
import { runOpenLoop, type CallOutcome, type OpenLoopFigures } from "./open-loop.js";
import { createDepositsByRpc, inParallel, type RunningProduct } from "./product.js";

/**
 * Issue 18: many bank reports for the pending deposits of few receiving accounts at once.
 *
 * The bench makes a bank of its own in the catalog (CreateBank, a code no other bank has) with
 * exactly two active sandbox receiving accounts (CreateReceivingAccount), and checks that the
 * catalog then lists exactly those two as the bank's active sandbox accounts. Deposits made
 * with that bank's id can only be assigned one of the two, on the all-in-one and on the split
 * target alike, whatever the seed holds. Each scenario then:
 *
 * 1. warms up: rate × min(1 s, --warmup) deposits of their own, paid at the rate, not measured
 *    (a failure there fails the run all the same);
 * 2. makes `count` pending deposits on the two accounts (deposit RPC CreateDeposit, as
 *    createDepositsByRpc, round-robin over the merchants, each of another amount), and checks
 *    that no other unpaid deposit is assigned to either account;
 * 3. pays each exactly once at a fixed rate, open loop, the two accounts in turn:
 *    - bank-reports: the deposit service's ReportTransfer, as a bank integration reports an
 *      incoming transfer (the account's IBAN, the exact amount, the reference in the
 *      description, the customer's name as sender in capitals, a bank transaction id of its own);
 *    - sandbox-pay: the merchant's signed POST /v1/sandbox/deposit/{id}/pay on the gateway;
 * 4. waits until the payout service has credited every deposit, then checks that each one was
 *    completed exactly once: completed, with its amount, changed once (sequence 2), and one
 *    deposit_credit ledger entry of its amount. (Balances against ledgers: the run's ledger
 *    check at the end.)
 *
 * A call counts as OK only when its answer says the deposit is completed by it: a failed call,
 * a timeout, a transfer left unmatched or in review, or a duplicate is an error.
 */

export type ReportScenario = "bank-reports" | "sandbox-pay";

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

export interface ReportScenarioFigures extends Omit<OpenLoopFigures, "failedIndexes"> {
  /** Pending deposits paid (the measured set). */
  deposits: number;
  accounts: Array<{ iban: string; deposits: number }>;
  /** CreateDeposit calls per second while the set was made (32 at a time). */
  depositsCreatedPerSecond: number;
  warmup: { sent: number; ok: number; errors: number; errorsByCode: Record<string, number>; failureSamples: string[] };
  check: CompletionCheck;
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

/** Calls left unanswered before the schedule waits: ten seconds of the rate, at least 256. */
function inFlightCap(rate: number): number {
  return Math.max(256, Math.ceil(rate * 10));
}

const CALL_TIMEOUT_MS = 30_000;

/** After the last credit of a successful call, how long no further credit may come before the deposits are read back. */
const QUIET_MS = 3_000;

/** A Turkish IBAN (ISO 13616 checksum) with a made-up bank code and a random account number. */
function benchIban(): string {
  const account = `9${String(randomInt(10_000_000)).padStart(7, "0")}${String(randomInt(100_000_000)).padStart(8, "0")}`;
  const bban = `009900${account}`;
  const numeric = `${bban}292700`; // "TR00" moved to the end, letters as numbers (T=29, R=27)
  const check = 98n - (BigInt(numeric) % 97n);
  return `TR${String(check).padStart(2, "0")}${bban}`;
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

/** `count` pending deposits with the bench bank's id, each assigned one of its two accounts; the two accounts in turn. */
async function createReportDeposits(
  product: RunningProduct,
  merchants: readonly Merchant[],
  accounts: ReportAccounts,
  count: number,
  tag: string,
): Promise<{ deposits: ReportDeposit[]; perSecond: number }> {
  const t0 = performance.now();
  const made = await createDepositsByRpc(product, merchants, count, tag, Infinity, {
    bankId: accounts.bankId,
    // Each of another amount: only the reference may tell them apart, and it does.
    amount: (n) => 25_000n + BigInt(n),
    customerName: (n) => CUSTOMER_NAMES[n % CUSTOMER_NAMES.length]!,
  });
  const perSecond = Math.round(made.length / ((performance.now() - t0) / 1000));
  const byIban = new Map(accounts.accounts.map((a) => [a.iban, [] as ReportDeposit[]]));
  for (const { merchantIndex, deposit } of made) {
    const iban = deposit.assignedAccount?.iban ?? "";
    const list = byIban.get(iban);
    if (!list || deposit.bankId !== accounts.bankId || deposit.status !== DepositStatus.PENDING) {
      throw new Error(`deposit ${deposit.id} (${DepositStatus[deposit.status]}, bank ${deposit.bankId}) was assigned ${iban || "no account"}, not one of the bench bank's two accounts`);
    }
    list.push({ merchantIndex, id: deposit.id, iban, amount: deposit.requestedAmount, currency: deposit.currency, reference: deposit.reference, customerName: deposit.customer?.name ?? "" });
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
async function othersOnTheAccounts(product: RunningProduct, accounts: ReportAccounts, deposits: readonly ReportDeposit[]): Promise<string[]> {
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

function rpcFailure(what: string, err: unknown): CallOutcome {
  const info = errorInfo(err);
  const code = `${Code[info.code] ?? info.code}${info.reason ? ` ${info.reason}` : ""}`;
  return { code, sample: `${what}: ${code}: ${info.message.slice(0, 300)}` };
}

/** ReportTransfer for one deposit; OK only when its answer completes that deposit. */
function reportTransfer(product: RunningProduct, d: ReportDeposit, bankTransactionId: string): Promise<CallOutcome> {
  const what = `report ${bankTransactionId} for ${d.id}`;
  return product.clients.deposits
    .reportTransfer(
      {
        iban: d.iban,
        amount: d.amount,
        currency: d.currency,
        senderName: d.customerName.toLocaleUpperCase("tr-TR"),
        reference: `${d.reference} nolu yatirim`,
        bankTransactionId,
        valueDate: "",
        senderIban: "",
      },
      { timeoutMs: CALL_TIMEOUT_MS },
    )
    .then((res): CallOutcome => {
      if (res.duplicate) return { code: "DUPLICATE", sample: `${what}: answered as a duplicate` };
      if (res.deposit?.id === d.id && res.deposit.status === DepositStatus.COMPLETED && res.transfer?.depositId === d.id) return {};
      const t = res.transfer;
      const status = t ? (TransferStatus[t.status] ?? String(t.status)) : "no transfer";
      return { code: `NOT_COMPLETED ${status}`, sample: `${what}: transfer ${t?.id ?? "?"} ${status}${t?.unmatchedReason ? ` (${t.unmatchedReason})` : ""}, deposit ${res.deposit?.id ?? "none"} ${res.deposit ? DepositStatus[res.deposit.status] : ""}` };
    })
    .catch((err: unknown) => rpcFailure(what, err));
}

/** The merchant's signed POST /v1/sandbox/deposit/{id}/pay, empty body; OK only on 200 with the deposit completed. */
function sandboxPay(gatewayUrl: string, agent: http.Agent, merchant: Merchant, d: ReportDeposit): Promise<CallOutcome> {
  const path = `/v1/sandbox/deposit/${encodeURIComponent(d.id)}/pay`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers = {
    "x-api-key": merchant.apiKey,
    "x-timestamp": timestamp,
    "x-signature": sign(merchant.apiSecret, { timestamp, method: "POST", path, body: "" }),
    "content-length": "0",
  };
  return new Promise<CallOutcome>((resolve) => {
    const req = http.request(`${gatewayUrl}${path}`, { method: "POST", headers, agent, timeout: CALL_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", (err) => resolve({ code: "connection error", sample: `pay ${d.id}: ${err.message}` }));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        let body: { data?: { transactionId?: string; status?: string }; error?: { code?: string } } = {};
        try {
          body = JSON.parse(text) as typeof body;
        } catch {
          // Not JSON: reported below with its first characters.
        }
        if (status === 200 && body.data?.transactionId === d.id && body.data.status === "completed") return resolve({});
        const code = status === 200 ? `200 but ${body.data?.status ?? "no deposit"}` : `${status}${body.error?.code ? ` ${body.error.code}` : ""}`;
        resolve({ code, sample: `pay ${d.id}: ${status} ${text.slice(0, 300)}` });
      });
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS / 1000} s`)));
    req.on("error", (err) => resolve({ code: err.message.startsWith("no answer") ? "timeout" : "connection error", sample: `pay ${d.id}: ${err.message}` }));
    req.end();
  });
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
async function cancelUnpaid(product: RunningProduct, merchants: readonly Merchant[], deposits: readonly ReportDeposit[]): Promise<number> {
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

/** One of the two scenarios on one product, end to end (see the top of this file). */
export async function runReportScenario(options: {
  scenario: ReportScenario;
  product: RunningProduct;
  merchants: readonly Merchant[];
  accounts: ReportAccounts;
  count: number;
  rate: number;
  warmupSeconds: number;
  /** Unique within the run: processIds and bank transaction ids carry it. */
  tag: string;
  mysqlPid?: number | undefined;
  natsPid?: number | undefined;
  log(message: string): void;
}): Promise<ReportScenarioFigures> {
  const { scenario, product, merchants, accounts, rate, log } = options;
  const maxInFlight = inFlightCap(rate);
  const agent = new http.Agent({ keepAlive: true, maxSockets: maxInFlight });
  const pay = (set: readonly ReportDeposit[], prefix: string) => (i: number) => {
    const d = set[i]!;
    return scenario === "bank-reports" ? reportTransfer(product, d, `BENCH-${prefix}-${i}`) : sandboxPay(product.gatewayUrl, agent, merchants[d.merchantIndex]!, d);
  };
  const loop = (set: readonly ReportDeposit[], prefix: string) =>
    runOpenLoop({
      count: set.length,
      rate,
      maxInFlight,
      serverPids: product.pids,
      processes: product.processes.map((p) => ({ name: p.name, pid: p.server.pid })),
      mysqlPid: options.mysqlPid,
      natsPid: options.natsPid,
      call: pay(set, prefix),
    });
  try {
    const warmupCount = Math.round(rate * Math.min(1, options.warmupSeconds));
    let warmup: ReportScenarioFigures["warmup"] = { sent: 0, ok: 0, errors: 0, errorsByCode: {}, failureSamples: [] };
    if (warmupCount > 0) {
      const { deposits } = await createReportDeposits(product, merchants, accounts, warmupCount, `${options.tag}w`);
      const figures = await loop(deposits, `${options.tag}w`);
      warmup = { sent: figures.sent, ok: figures.ok, errors: figures.errors, errorsByCode: figures.errorsByCode, failureSamples: figures.failureSamples };
      const codes = Object.entries(figures.errorsByCode).map(([c, n]) => `${c} ${n}`);
      const cancelled = figures.errors > 0 ? await cancelUnpaid(product, merchants, figures.failedIndexes.map((i) => deposits[i]!)) : 0;
      log(`${scenario} warm-up: ${warmupCount} deposits at ${rate}/s, ${figures.errors} errors${codes.length ? ` (${codes.join(", ")}; ${cancelled} of those deposits cancelled)` : ""}`);
    }

    const sinceMs = Date.now();
    const { deposits, perSecond } = await createReportDeposits(product, merchants, accounts, options.count, `${options.tag}m`);
    const problems = await othersOnTheAccounts(product, accounts, deposits);
    if (problems.length > 0) throw new Error(`the two accounts hold other unpaid deposits than the ${deposits.length} made: ${problems.slice(0, 5).join("; ")}`);
    const split = accounts.accounts.map((a) => ({ iban: a.iban, deposits: deposits.filter((d) => d.iban === a.iban).length }));
    log(`${scenario}: ${deposits.length} pending deposits made (${perSecond}/s), ${split.map((s) => `${s.deposits} on ${s.iban}`).join(", ")}; paying them at ${rate}/s`);
    // Let the creations' own work (outbox, callbacks) settle before the measured load.
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const figures = await loop(deposits, `${options.tag}m`);
    const lastAnswerAt = performance.now();
    const codes = Object.entries(figures.errorsByCode).map(([c, n]) => `${c} ${n}`);
    log(
      `${scenario}: all ${figures.sent} answered (${figures.ok} ok${codes.length ? `; ${codes.join(", ")}` : ""}), p50 ${figures.latencyMs.p50} ms, p99 ${figures.latencyMs.p99} ms, max ${figures.latencyMs.max} ms${
        figures.cpuMsPerCallByProcess ? `; cpu ms/call ${Object.entries(figures.cpuMsPerCallByProcess).map(([name, ms]) => `${name} ${ms}`).join(", ")}` : ""
      }; waiting for every credit in the ledger`,
    );
    const failed = new Set(figures.failedIndexes);
    const answeredOk = new Set(deposits.filter((_, i) => !failed.has(i)).map((d) => d.id));
    const check = await checkCompletedOnce(product, merchants, deposits, answeredOk, sinceMs, lastAnswerAt, Math.max(60_000, options.count * 20));
    if (figures.errors > 0) log(`${scenario}: ${await cancelUnpaid(product, merchants, figures.failedIndexes.map((i) => deposits[i]!))} deposits whose payment failed cancelled (they would be candidates of the next set)`);
    const { failedIndexes: _, ...measured } = figures;
    return { ...measured, deposits: deposits.length, accounts: split, depositsCreatedPerSecond: perSecond, warmup, check };
  } finally {
    agent.destroy();
  }
}
