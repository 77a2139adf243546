import type { Client } from "@connectrpc/connect";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import type { MerchantService } from "@payments/contracts/merchant";
import { AuditService } from "@payments/contracts/operator";
import { openDatabase } from "@payments/kit";
import { operatorClient } from "./identities.js";
import type { Knex } from "knex";
import type { RunningProduct } from "./product.js";

/**
 * Issue 23: every list an operator pages through is paged by key on an index, so a page costs
 * the same on the first day and with 100,000 deposits and 10,000 open transfers. This scenario
 * fills the deposit service's MySQL database to that size (rows cloned from one the service made
 * itself, so every column is as the service writes it) and times, one call after another, the
 * pages an operator's screens ask for: deposits of one merchant and of every merchant (first
 * pages and pages deep into the cursor), by status, the open transfers queue walked to its end,
 * and the audit by target. Target: each page p95 ≤ 200 ms.
 */
export interface OperatorListsClients {
  merchants: Client<typeof MerchantService>;
  deposits: Client<typeof DepositService>;
  /** The deposit service's audit (ListAuditRecords with the operator's assertion). */
  depositAudit: Client<typeof AuditService>;
}

export interface OperatorListsOptions {
  deposits: number;
  transfers: number;
  auditRecords: number;
  merchants: number;
  /** Pages timed per list. */
  samples: number;
  /** A receiving account's IBAN of the kind the merchants are (the template transfer is reported to it). */
  iban: string;
}

export interface ListTiming {
  list: string;
  pages: number;
  rows: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export interface OperatorListsFigures {
  seeded: { deposits: number; transfers: number; auditRecords: number; seedSeconds: number };
  lists: ListTiming[];
  targetP95Ms: number;
}

const TARGET_P95_MS = 200;
const CHUNK = 2_000;
const STATUSES = ["pending", "completed", "completed", "completed", "failed", "expired", "cancelled"];

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function timing(list: string, samples: Array<{ ms: number; rows: number }>): ListTiming {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const round = (v: number) => Math.round(v * 10) / 10;
  return { list, pages: samples.length, rows: samples.reduce((n, s) => n + s.rows, 0), p50Ms: round(percentile(ms, 50)), p95Ms: round(percentile(ms, 95)), maxMs: round(ms.at(-1) ?? 0) };
}

async function timed(call: () => Promise<number>): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  const rows = await call();
  return { ms: performance.now() - started, rows };
}

async function insertChunks(db: Knex, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await db(table).insert(rows.slice(i, i + CHUNK));
}

/** Fills the deposit database: clones of one deposit, one unmatched transfer and one audit record the service wrote. */
async function seed(db: Knex, clients: OperatorListsClients, options: OperatorListsOptions): Promise<{ merchantIds: string[]; auditTargets: string[] }> {
  const merchantIds: string[] = [];
  for (let i = 0; i < options.merchants; i++) {
    const { merchant } = await clients.merchants.createMerchant({ name: `Lists Bench ${i}`, sandbox: true });
    merchantIds.push(merchant!.id);
  }
  const { deposit } = await clients.deposits.createDeposit({ merchantId: merchantIds[0]!, processId: "lists-template", amount: 10_000n, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  const template = (await db("deposits").where({ id: deposit!.id }).first()) as Record<string, unknown>;
  const now = Date.now();
  const span = 30 * 24 * 3600 * 1000;
  const deposits = Array.from({ length: options.deposits }, (_, i) => {
    const createdAt = now - span + Math.floor((i / options.deposits) * span);
    return {
      ...template,
      id: `${String(template.id).split("_")[0]}_lists${i.toString(36).padStart(8, "0")}`,
      merchant_id: merchantIds[i % merchantIds.length],
      process_id: `lists-${i}`,
      status: STATUSES[i % STATUSES.length],
      reference: `L${i.toString(36).toUpperCase().padStart(10, "0")}`,
      checkout_token: `lists_${i}_${now}`,
      customer_name: `Customer ${i % 5000}`,
      created_at: createdAt,
      updated_at: createdAt,
      expires_at: createdAt + 1800_000,
    };
  });
  await insertChunks(db, "deposits", deposits);

  const reported = await clients.deposits.reportTransfer({ iban: options.iban, amount: 12_345n, senderName: "Nobody Known", reference: "no reference here", bankTransactionId: "lists-template" });
  const transferId = reported.transfer?.id;
  const transferTemplate = (await db("incoming_transfers").where({ id: transferId }).first()) as Record<string, unknown>;
  const transfers = Array.from({ length: options.transfers }, (_, i) => ({
    ...transferTemplate,
    id: `${String(transferTemplate.id).split("_")[0]}_lists${i.toString(36).padStart(8, "0")}`,
    bank_transaction_id: `lists-${i}`,
    reported_at: now - span + Math.floor((i / options.transfers) * span),
  }));
  await insertChunks(db, "incoming_transfers", transfers);

  const audit = Array.from({ length: options.auditRecords }, (_, i) => ({
    id: `aud_lists_${i.toString(36).padStart(8, "0")}`,
    created_at: now - span + Math.floor((i / options.auditRecords) * span),
    actor: `operator${i % 20}@example.com`,
    actor_kind: "human",
    role: "operator",
    service: "deposit",
    rpc: "payments.deposit.v1.DepositService/ConfirmDeposit",
    targets: JSON.stringify([deposits[i % deposits.length]!.id]),
    reason: "",
    outcome: "ok",
  }));
  await insertChunks(db, "operator_audit", audit);
  await insertChunks(
    db,
    "operator_audit_targets",
    audit.map((a, i) => ({ target_id: deposits[i % deposits.length]!.id, created_at: a.created_at, audit_id: a.id })),
  );
  return { merchantIds, auditTargets: audit.map((_, i) => deposits[i % deposits.length]!.id) };
}

export async function runOperatorLists(db: Knex, clients: OperatorListsClients, options: OperatorListsOptions): Promise<OperatorListsFigures> {
  const seedStarted = performance.now();
  const { merchantIds, auditTargets } = await seed(db, clients, options);
  const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
  const pick = (i: number) => merchantIds[i % merchantIds.length]!;
  const lists: ListTiming[] = [];

  // One merchant's deposits: first pages, then a walk 20 pages deep (the cursor must not get slower).
  const first: Array<{ ms: number; rows: number }> = [];
  for (let i = 0; i < options.samples; i++) first.push(await timed(async () => (await clients.deposits.listDeposits({ merchantId: pick(i), limit: 50 })).deposits.length));
  lists.push(timing("deposits of a merchant, first page (50)", first));

  const deep: Array<{ ms: number; rows: number }> = [];
  for (let m = 0; deep.length < options.samples; m++) {
    let cursor = "";
    for (let page = 0; page < 20 && deep.length < options.samples; page++) {
      let next = "";
      deep.push(await timed(async () => {
        const res = await clients.deposits.listDeposits({ merchantId: pick(m), limit: 50, cursor });
        next = res.nextCursor;
        return res.deposits.length;
      }));
      if (!next) break;
      cursor = next;
    }
  }
  lists.push(timing("deposits of a merchant, pages 1-20 by cursor", deep));

  const everyone: Array<{ ms: number; rows: number }> = [];
  let cursor = "";
  for (let i = 0; i < options.samples; i++) {
    everyone.push(await timed(async () => {
      const res = await clients.deposits.listDeposits({ allMerchants: true, limit: 100, cursor });
      cursor = res.nextCursor;
      return res.deposits.length;
    }));
  }
  lists.push(timing("deposits of every merchant, pages by cursor (100)", everyone));

  const pending: Array<{ ms: number; rows: number }> = [];
  for (let i = 0; i < options.samples; i++) pending.push(await timed(async () => (await clients.deposits.listDeposits({ merchantId: pick(i), status: DepositStatus.PENDING, limit: 50 })).deposits.length));
  lists.push(timing("pending deposits of a merchant (50)", pending));

  const queue: Array<{ ms: number; rows: number }> = [];
  let transfersCursor = "";
  for (let i = 0; i < options.samples; i++) {
    queue.push(await timed(async () => {
      const res = await clients.deposits.listUnmatchedTransfers({ includeReview: true, limit: 100, cursor: transfersCursor });
      transfersCursor = res.nextCursor;
      return res.transfers.length;
    }));
  }
  lists.push(timing("open transfers queue, pages by cursor (100)", queue));

  const audit: Array<{ ms: number; rows: number }> = [];
  for (let i = 0; i < options.samples; i++) {
    audit.push(await timed(async () => (await clients.depositAudit.listAuditRecords({ targetId: auditTargets[(i * 7) % auditTargets.length]!, limit: 50 })).records.length));
  }
  lists.push(timing("audit of one deposit (50)", audit));
  const byActor: Array<{ ms: number; rows: number }> = [];
  for (let i = 0; i < options.samples; i++) byActor.push(await timed(async () => (await clients.depositAudit.listAuditRecords({ actor: `operator${i % 20}@example.com`, limit: 50 })).records.length));
  lists.push(timing("audit of one operator (50)", byActor));

  return { seeded: { deposits: options.deposits, transfers: options.transfers, auditRecords: options.auditRecords, seedSeconds }, lists, targetP95Ms: TARGET_P95_MS };
}

/** The scenario on a running product: its deposit database and its services, as the bench's operator. */
export async function operatorListsOn(product: RunningProduct, options: Omit<OperatorListsOptions, "iban">): Promise<OperatorListsFigures> {
  const catalog = product.clients.bankCatalog;
  await catalog.seedSandboxAccounts({});
  const { accounts } = await catalog.listReceivingAccounts({ bankId: "", sandbox: true });
  const iban = accounts.find((a) => a.active)?.iban;
  if (!iban) throw new Error("no active sandbox receiving account to report the template transfer to");
  const db = openDatabase({ url: product.databaseUrl("deposit"), poolMax: 2 });
  try {
    return await runOperatorLists(
      db,
      {
        merchants: product.clients.merchants,
        deposits: operatorClient(DepositService, product.serviceUrl("deposit"), product.transport, product.identities),
        depositAudit: operatorClient(AuditService, product.serviceUrl("deposit"), product.transport, product.identities, "deposit"),
      },
      { ...options, iban },
    );
  } finally {
    await db.destroy();
  }
}
