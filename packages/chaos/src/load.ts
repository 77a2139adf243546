import { DepositStatus } from "@payments/contracts/deposit";
import { WithdrawalStatus } from "@payments/contracts/payout";
import { sign } from "@payments/signing";
import { turkishIban } from "@payments/testing";
import { RUN_SETTINGS, type Deployment } from "./deployment.js";
import type { Random } from "./rng.js";

export interface Shop {
  /** The `?shop=` of its callback URL. */
  shop: string;
  merchantId: string;
  apiKey: string;
  apiSecret: string;
  sandbox: boolean;
}

/** One answer of the gateway (status 0: no answer: connection refused or reset, or 10 s passed). */
export interface Answer {
  at: number;
  action: string;
  status: number;
  code?: string;
}

/** A transaction the gateway created (a 201, or found again by its processId after an unknown outcome). */
export interface Created {
  kind: "deposit" | "withdrawal";
  id: string;
  processId: string;
  merchantId: string;
  sandbox: boolean;
  /** True when the 201 itself arrived; false when a retry found it (the first answer was lost). */
  by201: boolean;
  iban?: string;
  amount: number;
  /** Date.now() when the driver learnt of it. */
  at: number;
}

export interface LoadCounts {
  requests: number;
  retries: number;
  /** Requests whose outcome stayed unknown after every retry (no 201, not found by processId). */
  unknownOutcomes: number;
  statementImports: number;
  statementImportFailures: number;
  operatorDecisions: number;
  /** Decisions the service refused (the deposit had expired or was cancelled meanwhile): expected, and nothing changed. */
  operatorRefusals: number;
  operatorDecisionFailures: number;
}

type Action = "deposit" | "pay" | "expire" | "cancelDeposit" | "statement" | "withdraw" | "cancelWithdrawal" | "operator" | "read";

const WEIGHTS: Record<Action, number> = { deposit: 30, pay: 14, expire: 3, cancelDeposit: 4, statement: 8, withdraw: 20, cancelWithdrawal: 3, operator: 6, read: 12 };

const RETRYABLE = new Set([0, 502, 503, 504]);

/**
 * The mixed load of the run: merchants' API calls through the gateways (deposits, sandbox
 * payments and expiries, cancels, withdrawals, reads), statement imports that complete live
 * deposits, and operators' decisions on withdrawals the bank left to them. A POST whose answer
 * is lost is retried with the same processId, as a merchant would; a duplicate then finds it.
 */
export class LoadDriver {
  readonly answers: Answer[] = [];
  readonly created: Created[] = [];
  readonly counts: LoadCounts = { requests: 0, retries: 0, unknownOutcomes: 0, statementImports: 0, statementImportFailures: 0, operatorDecisions: 0, operatorRefusals: 0, operatorDecisionFailures: 0 };
  private readonly pendingDeposits: Created[] = [];
  private readonly liveReferences = new Map<string, string>();
  private readonly importedFiles: Uint8Array[] = [];
  /** Statement lines written without the deposit's reference (as customers do): token in the description → the deposit they pay. */
  private readonly withoutReference = new Map<string, string>();
  private n = 0;
  private stopped = false;

  constructor(
    private readonly deployment: Deployment,
    private readonly shops: readonly Shop[],
    private readonly random: Random,
    private readonly runTag: string,
  ) {}

  /** `users` loops, each sending its next request `thinkMs` after the previous answer, until stop(). */
  async run(users: number, thinkMs: number): Promise<void> {
    await Promise.all(
      Array.from({ length: users }, async () => {
        while (!this.stopped) {
          const action = this.random.weighted(WEIGHTS);
          try {
            await this.act(action);
          } catch (err) {
            this.answers.push({ at: Date.now(), action: `${action}:threw`, status: -1, code: (err as Error).message.slice(0, 200) });
          }
          await new Promise((resolve) => setTimeout(resolve, thinkMs));
        }
      }),
    );
  }

  stop(): void {
    this.stopped = true;
  }

  private async act(action: Action): Promise<void> {
    switch (action) {
      case "deposit":
        return this.createDeposit();
      case "pay":
        return this.onPendingSandboxDeposit("pay");
      case "expire":
        return this.onPendingSandboxDeposit("expire");
      case "cancelDeposit":
        return this.cancelDeposit();
      case "statement":
        return this.importStatement();
      case "withdraw":
        return this.createWithdrawal();
      case "cancelWithdrawal":
        return this.cancelWithdrawal();
      case "operator":
        return this.operatorDecisions();
      case "read":
        return this.read();
    }
  }

  /** A signed request through the gateways' balancer; every answer noted. */
  async call(shop: Shop, action: string, method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; json?: { data?: Record<string, unknown>; error?: { code?: string } } }> {
    const text = body === undefined ? "" : JSON.stringify(body);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = {
      "x-api-key": shop.apiKey,
      "x-timestamp": timestamp,
      "x-signature": sign(shop.apiSecret, { timestamp, method, path, body: text }),
    };
    if (text) headers["content-type"] = "application/json";
    this.counts.requests++;
    let status: number;
    let json: { data?: Record<string, unknown>; error?: { code?: string } } | undefined;
    try {
      const res = await fetch(`${this.deployment.gatewayUrl}${path}`, { method, headers, ...(text ? { body: text } : {}), signal: AbortSignal.timeout(10_000) });
      status = res.status;
      const raw = await res.text();
      try {
        json = JSON.parse(raw) as typeof json;
      } catch {
        json = undefined;
      }
    } catch {
      status = 0;
    }
    this.answers.push({ at: Date.now(), action, status, ...(json?.error?.code ? { code: json.error.code } : {}) });
    return { status, ...(json ? { json } : {}) };
  }

  /** A POST that creates, retried with the same body while its answer is lost; then found by processId. */
  private async create(shop: Shop, kind: "deposit" | "withdrawal", path: string, body: { processId: string; amount: number }, iban?: string): Promise<Created | undefined> {
    for (let attempt = 0; attempt < 4; attempt++) {
      if (attempt > 0) {
        this.counts.retries++;
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      }
      const { status, json } = await this.call(shop, kind === "deposit" ? "createDeposit" : "createWithdrawal", "POST", path, body);
      if (status === 201) {
        const data = json?.data ?? {};
        const assigned = (data.assignedAccount as { iban?: string } | undefined)?.iban;
        return this.remember({ kind, id: String(data.transactionId), processId: body.processId, merchantId: shop.merchantId, sandbox: shop.sandbox, by201: true, amount: body.amount, at: Date.now(), ...(assigned ?? iban ? { iban: assigned ?? iban } : {}) });
      }
      if (status === 400 && json?.error?.code === "DUPLICATE_TRANSACTION") {
        // An earlier attempt went through; its 201 was lost. Find it as a merchant would.
        const found = await this.call(shop, kind === "deposit" ? "findDeposit" : "findWithdrawal", "GET", `${path}?processId=${encodeURIComponent(body.processId)}`);
        const data = found.json?.data;
        if (found.status === 200 && data) {
          const assigned = (data.assignedAccount as { iban?: string } | undefined)?.iban;
          return this.remember({ kind, id: String(data.transactionId), processId: body.processId, merchantId: shop.merchantId, sandbox: shop.sandbox, by201: false, amount: body.amount, at: Date.now(), ...(assigned ?? iban ? { iban: assigned ?? iban } : {}) });
        }
        this.counts.unknownOutcomes++;
        return undefined;
      }
      if (!RETRYABLE.has(status)) return undefined;
    }
    this.counts.unknownOutcomes++;
    return undefined;
  }

  private remember(created: Created): Created {
    this.created.push(created);
    if (created.kind === "deposit") this.pendingDeposits.push(created);
    return created;
  }

  private shop(filter?: (s: Shop) => boolean): Shop {
    return this.random.pick(filter ? this.shops.filter(filter) : this.shops);
  }

  private async createDeposit(): Promise<void> {
    const shop = this.shop();
    const processId = `${this.runTag}-d${++this.n}`;
    const amount = this.random.int(100, 5_000) * 100;
    const created = await this.create(shop, "deposit", "/v1/deposit", { processId, amount, customer: { id: `cus${this.n}`, name: "Ayşe Yılmaz", username: "ayse" } } as { processId: string; amount: number });
    if (created && !shop.sandbox) {
      // The reference the customer writes on the transfer: what the bank statement carries.
      try {
        const { deposit } = await this.deployment.clients.deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: created.id } });
        if (deposit) this.liveReferences.set(created.id, deposit.reference);
      } catch {
        // The deposit service is down right now; the statement skips this one.
      }
    }
  }

  private takePending(sandbox: boolean): Created | undefined {
    // Deposits about to expire are left to expire (the expiry job's share of the load): a
    // customer pays within minutes, not at the last second, and the list stays short.
    const fresh = Date.now() - RUN_SETTINGS.depositTtlMs * 0.6;
    while (this.pendingDeposits.length > 0 && this.pendingDeposits[0]!.at < fresh) this.pendingDeposits.shift();
    const index = this.pendingDeposits.findIndex((d) => d.sandbox === sandbox);
    if (index < 0) return undefined;
    // Not always the oldest, so some stay pending until they expire.
    const at = this.random.int(index, Math.min(this.pendingDeposits.length - 1, index + 8));
    const picked = this.pendingDeposits[at]!;
    if (picked.sandbox !== sandbox) return undefined;
    this.pendingDeposits.splice(at, 1);
    return picked;
  }

  private async onPendingSandboxDeposit(what: "pay" | "expire"): Promise<void> {
    const deposit = this.takePending(true);
    if (!deposit) return;
    const shop = this.shops.find((s) => s.merchantId === deposit.merchantId)!;
    await this.call(shop, what === "pay" ? "sandboxPay" : "sandboxExpire", "POST", `/v1/sandbox/deposit/${deposit.id}/${what}`, what === "pay" ? {} : undefined);
  }

  private async cancelDeposit(): Promise<void> {
    const deposit = this.takePending(this.random.chance(0.5));
    if (!deposit) return;
    const shop = this.shops.find((s) => s.merchantId === deposit.merchantId)!;
    await this.call(shop, "cancelDeposit", "POST", `/v1/deposit/${deposit.id}/cancel`);
  }

  /** An MT940 statement of one receiving account paying some of its live deposits; sometimes an earlier file again. */
  private async importStatement(): Promise<void> {
    if (this.importedFiles.length > 0 && this.random.chance(0.15)) {
      const again = this.random.pick(this.importedFiles);
      await this.import(again);
      return;
    }
    const batch: Array<{ deposit: Created; reference: string }> = [];
    for (let i = 0; i < 5; i++) {
      const deposit = this.takePending(false);
      if (!deposit) break;
      const reference = this.liveReferences.get(deposit.id);
      if (reference && deposit.iban) batch.push({ deposit, reference });
    }
    const byIban = new Map<string, typeof batch>();
    for (const item of batch) byIban.set(item.deposit.iban!, [...(byIban.get(item.deposit.iban!) ?? []), item]);
    for (const [iban, items] of byIban) {
      const lines = items.map(({ deposit, reference }) => {
        const ref = `C${++this.n}`;
        // One in five customers forgets the reference: an operator matches that transfer by hand.
        if (this.random.chance(0.2)) {
          this.withoutReference.set(ref, deposit.id);
          return { amount: (deposit.amount / 100).toFixed(2).replace(".", ","), ref, description: `HAVALE ${ref} KIRA VE DIGER` };
        }
        return { amount: (deposit.amount / 100).toFixed(2).replace(".", ","), ref, description: `GELEN FAST AYSE YILMAZ ODEME ${reference.slice(0, 4)}-${reference.slice(4)}` };
      });
      const content = new TextEncoder().encode(mt940(iban, lines, this.n));
      this.importedFiles.push(content);
      await this.import(content);
    }
  }

  private async import(content: Uint8Array): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      this.counts.statementImports++;
      try {
        // As the bank integration sends its statements: `bank-integration/chaos` for itself, no person.
        await this.deployment.clients.bankFeed.importStatement({ format: "mt940", content, fileName: `chaos-${this.n}.sta` }, { timeoutMs: 15_000 });
        return;
      } catch {
        this.counts.statementImportFailures++;
        this.counts.retries++;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  private async createWithdrawal(): Promise<void> {
    const shop = this.shop();
    const processId = `${this.runTag}-w${++this.n}`;
    const amount = this.random.int(10, 2_000) * 100;
    const iban = turkishIban(`00062${String(this.random.int(0, 999_999_999)).padStart(17, "0")}`);
    await this.create(shop, "withdrawal", "/v1/withdraw", { processId, amount, accountName: "Ayşe Yılmaz", iban, userId: `u${this.n}`, userName: "ayse", name: "Ayşe Yılmaz" } as { processId: string; amount: number }, iban);
  }

  private async cancelWithdrawal(): Promise<void> {
    const recent = this.created.filter((c) => c.kind === "withdrawal").slice(-10);
    if (recent.length === 0) return;
    const withdrawal = this.random.pick(recent);
    const shop = this.shops.find((s) => s.merchantId === withdrawal.merchantId)!;
    await this.call(shop, "cancelWithdrawal", "POST", `/v1/withdraw/${withdrawal.id}/cancel`);
  }

  /**
   * An operator's round: completes or fails the live withdrawals the bank left to them, with
   * the bank's reference, and matches transfers that came without a reference to the deposit
   * they pay (refused when that deposit is no longer pending: the money stays in suspense).
   */
  async operatorDecisions(): Promise<void> {
    await this.withdrawalDecisions();
    await this.transferDecisions();
  }

  private async transferDecisions(): Promise<void> {
    if (this.withoutReference.size === 0) return;
    const { deposits } = this.deployment.clients;
    try {
      const { transfers } = await deposits.listUnmatchedTransfers({ includeReview: true, limit: 200 });
      for (const transfer of transfers) {
        const token = /HAVALE (C\d+)/.exec(transfer.reference)?.[1];
        const depositId = token ? this.withoutReference.get(token) : undefined;
        if (!token || !depositId) continue;
        this.withoutReference.delete(token);
        this.counts.operatorDecisions++;
        try {
          await deposits.confirmDeposit({ depositId, transferId: transfer.id });
        } catch {
          this.counts.operatorRefusals++;
        }
      }
    } catch {
      this.counts.operatorDecisionFailures++;
    }
  }

  private async withdrawalDecisions(): Promise<void> {
    const { payouts } = this.deployment.clients;
    try {
      const { withdrawals } = await payouts.listWithdrawals({ allMerchants: true, status: WithdrawalStatus.PROCESSING, awaitingOperator: true, limit: 20 });
      for (const w of withdrawals.filter((x) => x.awaitingOperator)) {
        this.counts.operatorDecisions++;
        try {
          if (this.random.chance(0.8)) await payouts.completeWithdrawal({ withdrawalId: w.id, bankReference: `OP-${w.id.slice(-10)}` });
          else await payouts.failWithdrawal({ withdrawalId: w.id, reason: "ACCOUNT_CLOSED" });
        } catch {
          this.counts.operatorDecisionFailures++;
        }
      }
    } catch {
      this.counts.operatorDecisionFailures++;
    }
  }

  private async read(): Promise<void> {
    const shop = this.shop();
    if (this.random.chance(0.5)) {
      await this.call(shop, "balance", "GET", "/v1/balance");
      return;
    }
    const mine = this.created.filter((c) => c.merchantId === shop.merchantId).slice(-20);
    if (mine.length === 0) return;
    const one = this.random.pick(mine);
    await this.call(shop, "getTransaction", "GET", one.kind === "deposit" ? `/v1/deposit/${one.id}` : `/v1/withdraw/${one.id}`);
  }
}

/** An MT940 statement of `iban` with one credit line per payment. */
function mt940(iban: string, lines: Array<{ amount: string; ref: string; description: string }>, n: number): string {
  const body = lines.map((l) => `:61:2611261126C${l.amount}NTRF${l.ref}//${l.ref}\n:86:${l.description}`).join("\n");
  const total = lines.reduce((sum, l) => sum + Number(l.amount.replace(",", ".")), 0);
  const closing = total.toFixed(2).replace(".", ",");
  return `:20:CHAOS${n}\n:25:${iban}\n:28C:${String(n).padStart(5, "0")}/001\n:60F:C261125TRY0,00\n${body}\n:62F:C261126TRY${closing}\n-\n`;
}

export { DepositStatus };
