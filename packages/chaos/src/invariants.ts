import knexFactory, { type Knex } from "knex";
import { DEPOSIT_STATUS_TOPICS, WITHDRAWAL_STATUS_TOPICS } from "@payments/contracts";
import { DEPOSIT_STATUSES, WITHDRAWAL_STATUSES } from "@payments/contracts/statuses";
import { runCli } from "@payments/testing";
import type { FakeBank } from "./bank.js";
import type { Deployment, ServiceName } from "./deployment.js";
import type { FaultInjector } from "./faults.js";
import type { LoadDriver } from "./load.js";
import type { MerchantReceiver } from "./receiver.js";

export interface Check {
  ok: boolean;
  /** What was counted, and up to a few examples of what broke the rule. */
  detail: Record<string, unknown>;
}

interface DepositRow {
  id: string;
  merchant_id: string;
  process_id: string;
  status: string;
  sequence: number;
  expires_at: number;
  sandbox: number | boolean;
}
interface WithdrawalRow {
  id: string;
  merchant_id: string;
  process_id: string;
  status: string;
  sequence: number;
  sandbox: number | boolean;
}

/** The service databases, read directly: the ground truth the invariants hold the product to. */
export class Books {
  private readonly dbs = new Map<ServiceName, Knex>();

  constructor(private readonly deployment: Deployment) {}

  db(name: ServiceName): Knex {
    let db = this.dbs.get(name);
    if (!db) {
      db = knexFactory({ client: "mysql2", connection: this.deployment.databaseUrl(name), pool: { min: 0, max: 2 } });
      this.dbs.set(name, db);
    }
    return db;
  }

  async close(): Promise<void> {
    await Promise.all([...this.dbs.values()].map((db) => db.destroy()));
  }

  /** What still moves: unpublished outbox rows, open transactions, callbacks not yet final. */
  async backlog(now: number): Promise<Record<string, number>> {
    const count = async (query: Knex.QueryBuilder) => Number((await query.count<Array<{ n: number }>>({ n: "*" }))[0]?.n ?? 0);
    const outbox = await Promise.all((["merchant", "bank-catalog", "deposit", "payout"] as const).map((name) => count(this.db(name)("outbox").whereNull("published_at"))));
    return {
      outboxUnpublished: outbox.reduce((a, b) => a + b, 0),
      depositsPendingUnexpired: await count(this.db("deposit")("deposits").where({ status: "pending" }).where("expires_at", ">", now - 5_000)),
      depositsPendingPastExpiry: await count(this.db("deposit")("deposits").where({ status: "pending" }).where("expires_at", "<=", now - 5_000)),
      withdrawalsOpen: await count(this.db("payout")("withdrawals").whereIn("status", ["pending", "processing"])),
      callbacksPending: await count(this.db("callback-sender")("callback_events").where({ status: "pending" })),
    };
  }

  deposits(): Promise<DepositRow[]> {
    return this.db("deposit")("deposits").select<DepositRow[]>("id", "merchant_id", "process_id", "status", "sequence", "expires_at", "sandbox");
  }

  withdrawals(): Promise<WithdrawalRow[]> {
    return this.db("payout")("withdrawals").select<WithdrawalRow[]>("id", "merchant_id", "process_id", "status", "sequence", "sandbox");
  }
}

const examples = <T>(items: readonly T[], n = 5): T[] => items.slice(0, n);

/** Every invariant of the run, each with what it counted. */
export async function checkInvariants(input: {
  deployment: Deployment;
  books: Books;
  load: LoadDriver;
  receiver: MerchantReceiver;
  bank: FakeBank;
  faults: FaultInjector;
  /** How long after a fault healed a 503 (or a lost answer) still counts as its doing. */
  graceMs: number;
}): Promise<Record<string, Check>> {
  const { deployment, books, load, receiver, bank, faults } = input;
  const checks: Record<string, Check> = {};
  const [deposits, withdrawals] = await Promise.all([books.deposits(), books.withdrawals()]);
  const depositById = new Map(deposits.map((d) => [d.id, d]));
  const withdrawalById = new Map(withdrawals.map((w) => [w.id, w]));

  // Every 201 exists exactly once: the row with that id, for that merchant and processId; no processId twice.
  {
    const missing: string[] = [];
    const seen = new Map<string, number>();
    for (const c of load.created) {
      const row = c.kind === "deposit" ? depositById.get(c.id) : withdrawalById.get(c.id);
      if (!row || row.process_id !== c.processId || row.merchant_id !== c.merchantId) missing.push(`${c.kind} ${c.id} (${c.processId})`);
      seen.set(`${c.kind}:${c.id}`, (seen.get(`${c.kind}:${c.id}`) ?? 0) + 1);
    }
    const twice = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
    const keyTwice = (rows: ReadonlyArray<{ merchant_id: string; process_id: string }>) => {
      const keys = new Map<string, number>();
      for (const r of rows) keys.set(`${r.merchant_id}/${r.process_id}`, (keys.get(`${r.merchant_id}/${r.process_id}`) ?? 0) + 1);
      return [...keys].filter(([, n]) => n > 1).map(([k]) => k);
    };
    const duplicateProcessIds = [...keyTwice(deposits), ...keyTwice(withdrawals)];
    checks.every201ExistsExactlyOnce = {
      ok: missing.length === 0 && twice.length === 0 && duplicateProcessIds.length === 0,
      detail: {
        created: load.created.length,
        by201: load.created.filter((c) => c.by201).length,
        foundAfterLostAnswer: load.created.filter((c) => !c.by201).length,
        missing: missing.length,
        createdTwice: twice.length,
        duplicateProcessIds: duplicateProcessIds.length,
        examples: examples([...missing, ...twice, ...duplicateProcessIds]),
      },
    };
  }

  // Every transaction in a legal state; nothing open after the drain; every deposit past its expiry expired (or finished).
  {
    const now = Date.now();
    const illegalDeposits = deposits.filter((d) => !(DEPOSIT_STATUSES as readonly string[]).includes(d.status));
    const illegalWithdrawals = withdrawals.filter((w) => !(WITHDRAWAL_STATUSES as readonly string[]).includes(w.status));
    const notExpired = deposits.filter((d) => d.status === "pending" && Number(d.expires_at) < now - 5_000);
    const openWithdrawals = withdrawals.filter((w) => w.status === "pending" || w.status === "processing");
    const byStatus = (rows: ReadonlyArray<{ status: string }>) => rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
    checks.legalStates = {
      ok: illegalDeposits.length + illegalWithdrawals.length + notExpired.length + openWithdrawals.length === 0,
      detail: {
        deposits: byStatus(deposits),
        withdrawals: byStatus(withdrawals),
        illegal: examples([...illegalDeposits, ...illegalWithdrawals].map((r) => `${r.id}: ${r.status}`)),
        pendingPastExpiry: notExpired.length,
        withdrawalsStillOpen: openWithdrawals.length,
        examples: examples([...notExpired.map((d) => `deposit ${d.id}`), ...openWithdrawals.map((w) => `withdrawal ${w.id} ${w.status}`)]),
      },
    };
  }

  // Each balance equals its ledger, none negative; every receiving account balanced; every credited deposit credited once: `pnpm cli reconcile`.
  {
    const negative = await books.db("payout")("balances").where("available", "<", 0).orWhere("held", "<", 0).select<Array<{ merchant_id: string; available: number; held: number }>>("merchant_id", "available", "held");
    const cli = await runCli(["reconcile", "--json"], {
      INTERNAL_API_TOKEN: deployment.token,
      // The CLI is a workload of its own (`cli`, which carries operators), with the run's key for it.
      WORKLOAD_KEY: deployment.workloads.keyOf("cli"),
      WORKLOAD_ID: undefined,
      WORKLOAD_TRUST_DOMAIN: deployment.workloads.trustDomain,
      // As a finance operator holding the run's key: reconcile reads the ledger, which is finance's.
      OPERATOR_ASSERTION_PRIVATE_KEY: deployment.operatorKey,
      PAYMENTS_OPERATOR: "chaos-reconcile@localhost",
      PAYMENTS_OPERATOR_ROLE: "finance",
      MERCHANT_SERVICE_URL: deployment.serviceUrl("merchant"),
      BANK_CATALOG_SERVICE_URL: deployment.serviceUrl("bank-catalog"),
      DEPOSIT_SERVICE_URL: deployment.serviceUrl("deposit"),
      PAYOUT_SERVICE_URL: deployment.serviceUrl("payout"),
      CALLBACK_SENDER_SERVICE_URL: deployment.serviceUrl("callback-sender"),
      GRPC_URL: undefined,
      CI: "true",
    });
    let report: { balanced?: boolean; accounts?: unknown[]; merchants?: Array<{ balanced: boolean }>; discrepancies?: string[]; credits?: unknown[] } = {};
    try {
      report = JSON.parse(cli.stdout) as typeof report;
    } catch {
      report = {};
    }
    const unbalancedMerchants = (report.merchants ?? []).filter((m) => !m.balanced);
    checks.balancesMatchLedgerNoneNegative = {
      ok: negative.length === 0 && unbalancedMerchants.length === 0 && report.balanced === true,
      detail: { merchants: report.merchants?.length ?? 0, negative: negative.length, unbalanced: unbalancedMerchants.length, examples: examples(negative) },
    };
    checks.reconcileBalanced = {
      ok: cli.code === 0 && report.balanced === true,
      detail: {
        exitCode: cli.code,
        accounts: report.accounts?.length ?? 0,
        creditsChecked: report.credits?.length ?? 0,
        discrepancies: examples(report.discrepancies ?? []),
        ...(cli.code !== 0 && report.balanced === undefined ? { stderr: cli.stderr.slice(0, 500) } : {}),
      },
    };
  }

  // No withdrawal moved money twice: one key per withdrawal, every repeated send the same instruction, only live ones at the bank.
  {
    const sandboxAtBank = [...bank.executed.keys()].filter((id) => {
      const w = withdrawalById.get(id);
      return !w || Boolean(w.sandbox);
    });
    const resent = bank.resent();
    checks.noWithdrawalPaidTwice = {
      ok: bank.conflicting.length === 0 && sandboxAtBank.length === 0,
      detail: {
        liveWithdrawalsAtBank: bank.executed.size,
        bankCalls: [...bank.calls.values()].reduce((a, b) => a + b, 0),
        // The connector contract: after a crash or a lapsed claim the worker sends again with the
        // same idempotency key, and the bank executes it once. Counted, not a failure.
        resentWithSameKey: resent.length,
        conflictingResends: bank.conflicting.length,
        sandboxOrUnknownAtTheBank: sandboxAtBank.length,
        examples: examples([...bank.conflicting, ...sandboxAtBank]),
      },
    };
  }

  // Every status change reached the receiver at least once, in sequence order per transaction.
  {
    const topics = [...Object.values(DEPOSIT_STATUS_TOPICS), ...Object.values(WITHDRAWAL_STATUS_TOPICS)];
    const changeEvents = [
      ...(await books.db("deposit")("outbox").whereIn("topic", topics).select<Array<{ event_id: string }>>("event_id")),
      ...(await books.db("payout")("outbox").whereIn("topic", topics).select<Array<{ event_id: string }>>("event_id")),
    ].map((r) => r.event_id);
    const events = await books.db("callback-sender")("callback_events").select<Array<{ id: string; status: string; transaction_id: string; sequence: number }>>("id", "status", "transaction_id", "sequence");
    const eventById = new Map(events.map((e) => [e.id, e]));
    const arrived = new Map<string, number>();
    for (const a of receiver.arrivals) if (!arrived.has(a.eventId)) arrived.set(a.eventId, a.at);
    const notIngested = changeEvents.filter((id) => !eventById.has(id));
    const notArrived = changeEvents.filter((id) => !arrived.has(id));
    const notDelivered = events.filter((e) => e.status !== "delivered");
    // The last change of each transaction reached the merchant (its status and sequence).
    const lastSeen = new Map<string, { sequence: number; status: string }>();
    for (const a of receiver.arrivals) {
      const seen = lastSeen.get(a.transactionId);
      if (!seen || a.sequence > seen.sequence) lastSeen.set(a.transactionId, { sequence: a.sequence, status: a.status });
    }
    const finalMissed: string[] = [];
    for (const row of [...deposits, ...withdrawals]) {
      if (row.status === "pending") continue;
      const seen = lastSeen.get(row.id);
      if (!seen || seen.sequence !== Number(row.sequence) || seen.status !== row.status) finalMissed.push(`${row.id} ${row.status}#${row.sequence} (receiver: ${seen ? `${seen.status}#${seen.sequence}` : "nothing"})`);
    }
    // Order: by first arrival, each transaction's sequences only grow.
    const firstArrivals = new Map<string, Array<{ at: number; sequence: number }>>();
    const firstOf = new Set<string>();
    for (const a of receiver.arrivals) {
      if (firstOf.has(a.eventId)) continue;
      firstOf.add(a.eventId);
      firstArrivals.set(a.transactionId, [...(firstArrivals.get(a.transactionId) ?? []), { at: a.at, sequence: a.sequence }]);
    }
    const outOfOrder: string[] = [];
    const outOfOrderTransactions: string[] = [];
    for (const [tx, list] of firstArrivals) {
      for (let i = 1; i < list.length; i++) {
        if (list[i]!.sequence < list[i - 1]!.sequence) {
          outOfOrder.push(`${tx}: #${list[i - 1]!.sequence} before #${list[i]!.sequence}`);
          outOfOrderTransactions.push(tx);
        }
      }
    }
    // For the first few: what the callback-sender recorded of each event and its attempts, to find the cause.
    const orderTrace = await Promise.all(
      examples(outOfOrderTransactions, 3).map(async (tx) => ({
        transaction: tx,
        events: await books
          .db("callback-sender")("callback_events")
          .where({ transaction_id: tx })
          .select<Array<Record<string, unknown>>>("id", "sequence", "status", "attempts", "created_at", "received_at", "delivered_at"),
        attempts: await books
          .db("callback-sender")("callback_attempts as a")
          .join("callback_events as e", "e.id", "a.event_id")
          .where("e.transaction_id", tx)
          .orderBy("a.attempted_at")
          .select<Array<Record<string, unknown>>>("e.sequence", "a.number", "a.attempted_at", "a.status_code", "a.latency_ms", "a.outcome", "a.error"),
        arrivals: receiver.arrivals.filter((a) => a.transactionId === tx).map((a) => ({ sequence: a.sequence, at: a.at, answered: a.answered })),
      })),
    );
    checks.everyStatusChangeReachedTheMerchantInOrder = {
      ok: notIngested.length + notArrived.length + notDelivered.length + finalMissed.length + outOfOrder.length + receiver.badSignatures === 0,
      detail: {
        statusChanges: changeEvents.length,
        callbackEvents: events.length,
        arrivals: receiver.arrivals.length,
        distinctArrived: arrived.size,
        redeliveredCopies: receiver.arrivals.length - arrived.size,
        notIngested: notIngested.length,
        notArrived: notArrived.length,
        notDelivered: notDelivered.length,
        finalStatusMissed: finalMissed.length,
        outOfOrder: outOfOrder.length,
        badSignatures: receiver.badSignatures,
        examples: examples([...notIngested.map((id) => `not ingested ${id}`), ...notArrived.map((id) => `not arrived ${id}`), ...finalMissed, ...outOfOrder]),
        ...(orderTrace.length > 0 ? { orderTrace } : {}),
      },
    };
  }

  // No 500, ever; 503 SERVICE_UNAVAILABLE, 504 UPSTREAM_TIMEOUT (a paused replica) or no answer
  // at all (a gateway killed mid-request) only while a fault was under way or just after.
  {
    const byStatus: Record<string, number> = {};
    for (const a of load.answers) byStatus[a.code ? `${a.status} ${a.code}` : String(a.status)] = (byStatus[a.code ? `${a.status} ${a.code}` : String(a.status)] ?? 0) + 1;
    const dependencyDown = (status: number) => status === 503 || status === 504 || status === 0;
    const five00 = load.answers.filter((a) => a.status >= 500 && !dependencyDown(a.status));
    const unexplained = load.answers.filter((a) => dependencyDown(a.status) && !faults.activeAt(a.at, input.graceMs));
    const harness = load.answers.filter((a) => a.status === -1);
    checks.no500And503OnlyDuringAFault = {
      ok: five00.length === 0 && unexplained.length === 0 && harness.length === 0,
      detail: {
        byStatus,
        status500OrOther5xx: five00.length,
        dependencyDownWithoutAFault: unexplained.length,
        harnessErrors: harness.length,
        examples: examples([...five00, ...unexplained, ...harness].map((a) => `${new Date(a.at).toISOString()} ${a.action} ${a.status} ${a.code ?? ""}`)),
      },
    };
  }
  return checks;
}
