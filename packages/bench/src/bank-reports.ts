import http from "node:http";
import { Code } from "@connectrpc/connect";
import { DepositStatus, TransferStatus } from "@payments/contracts/deposit";
import { errorInfo } from "@payments/kit";
import { sign } from "@payments/signing";
import { CALL_TIMEOUT_MS, cancelUnpaid, checkCompletedOnce, createReportDeposits, othersOnTheAccounts, type CompletionCheck, type ReportAccounts, type ReportDeposit } from "./bank-report-deposits.js";
import type { Merchant } from "./load.js";
import { runOpenLoop, type CallOutcome, type OpenLoopFigures } from "./open-loop.js";
import type { RunningProduct } from "./product.js";

export { checkCompletedOnce, createReportAccounts, type CompletionCheck, type ReportAccounts, type ReportDeposit } from "./bank-report-deposits.js";

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
 * 2. makes `count` pending deposits on the two accounts (the merchants' POST /v1/deposit on
 *    the gateway with the bank's id as `bankCode`, as createDeposits, round-robin over the
 *    merchants, each of another amount), and checks that no other unpaid deposit is assigned
 *    to either account;
 * 3. pays each exactly once at a fixed rate, open loop, the two accounts in turn:
 *    - bank-reports: the deposit service's ReportTransfer, as a bank integration reports an
 *      incoming transfer, signed as the workload `bank-integration/bench` (the account's IBAN, the exact amount, the reference in the
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

export interface ReportScenarioFigures extends Omit<OpenLoopFigures, "failedIndexes"> {
  /** Pending deposits paid (the measured set). */
  deposits: number;
  accounts: Array<{ iban: string; deposits: number }>;
  /** Deposits per second (POST /v1/deposit, 32 at a time) while the set was made. */
  depositsCreatedPerSecond: number;
  warmup: { sent: number; ok: number; errors: number; errorsByCode: Record<string, number>; failureSamples: string[] };
  check: CompletionCheck;
}

/** Calls left unanswered before the schedule waits: ten seconds of the rate, at least 256. */
function inFlightCap(rate: number): number {
  return Math.max(256, Math.ceil(rate * 10));
}

function rpcFailure(what: string, err: unknown): CallOutcome {
  const info = errorInfo(err);
  const code = `${(Code[info.code] as string | undefined) ?? info.code}${info.reason ? ` ${info.reason}` : ""}`;
  return { code, sample: `${what}: ${code}: ${info.message.slice(0, 300)}` };
}

/** ReportTransfer for one deposit; OK only when its answer completes that deposit. */
function reportTransfer(product: RunningProduct, d: ReportDeposit, bankTransactionId: string): Promise<CallOutcome> {
  const what = `report ${bankTransactionId} for ${d.id}`;
  return product.clients.bankReports
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
      const status = t ? ((TransferStatus[t.status] as string | undefined) ?? String(t.status)) : "no transfer";
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
  const pay = (agent: http.Agent, set: readonly ReportDeposit[], prefix: string) => (i: number) => {
    const d = set[i]!;
    return scenario === "bank-reports" ? reportTransfer(product, d, `BENCH-${prefix}-${i}`) : sandboxPay(product.gatewayUrl, agent, merchants[d.merchantIndex]!, d);
  };
  // Connections of their own for each loop: one left idle from the warm-up past the gateway's
  // keep-alive timeout (5 s) could be closed by it just as the next loop sends on it (ECONNRESET).
  const loop = async (set: readonly ReportDeposit[], prefix: string) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: maxInFlight });
    try {
      return await runOpenLoop({
        count: set.length,
        rate,
        maxInFlight,
        serverPids: product.pids,
        processes: product.processes.map((p) => ({ name: p.name, pid: p.server.pid })),
        mysqlPid: options.mysqlPid,
        natsPid: options.natsPid,
        call: pay(agent, set, prefix),
      });
    } finally {
      agent.destroy();
    }
  };
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
  // The report carries the figures without the failed indexes (used just above, not a figure).
  const measured: Omit<OpenLoopFigures, "failedIndexes"> & Partial<Pick<OpenLoopFigures, "failedIndexes">> = { ...figures };
  delete measured.failedIndexes;
  return { ...measured, deposits: deposits.length, accounts: split, depositsCreatedPerSecond: perSecond, warmup, check };
}
