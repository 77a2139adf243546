import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { AuditService } from "@payments/contracts/operator";
import { serviceError, transactionWithRetry, type BaseContext, type Logger, type RunningServices, type ServiceModule } from "@payments/kit";
import { createServiceClient, createTestDatabase, testOperator } from "@payments/testing";
import type { Knex } from "knex";
import { chainedRowOf, ChainWalk, defineAccess, startServices, type AccessRules, type ChainVerdict, type PublishedHead } from "../src/index.js";

// A service of the tests' own whose one mutating RPC (MerchantService/SetDisplayName, served by a
// module named `merchant`) does to a table of widgets what its display name says, so the tests
// can commit, fail and retry changes around the audit row that must ride with them.

export const WIDGETS = "audit_test_widgets";

/** What a call of `how:name` does (its display name). */
export type Behaviour =
  /** inserts widget `name` in transactionWithRetry */
  | "ok"
  /** the same in knex's own ctx.db.transaction */
  | "knex"
  /** inserts it, then fails after its transaction committed (BROKEN_AFTER) */
  | "after"
  /** inserts it, then fails inside its transaction (BROKEN_INSIDE): rolled back */
  | "inside"
  /** inserts it, and the COMMIT fails (the connection cut under it) */
  | "commitfail"
  /** the same in knex's own transaction */
  | "knexcommitfail"
  /** the COMMIT of the first attempt fails, the second attempt commits */
  | "retry"
  /** a transaction that only reads, then one that inserts and whose COMMIT fails */
  | "readthenfail"
  /** an UPDATE that matches no row in a transaction, then BROKEN_AFTER */
  | "noop"
  /** waits 150 ms in its transaction, then inserts (calls racing each other) */
  | "slow";

const widgetsMigration = {
  name: "20990101000000_audit_test_widgets",
  async up(db: Knex) {
    await db.schema.createTable(WIDGETS, (t) => {
      t.string("name", 100).primary();
    });
  },
};

/** Arms a cut of the connection under the next COMMIT of `db` (the connection is destroyed as the COMMIT goes out): on MySQL the server rolls the transaction back. */
function commitCutter(db: Knex): { arm(): void } {
  let armed = false;
  db.on("query", (query: { sql?: string; __knexUid?: string }) => {
    if (!armed || !/^COMMIT/i.test(query.sql ?? "")) return;
    armed = false;
    const used = (db.client as { pool: { used: Array<{ resource: { __knexUid?: string; destroy(): void } }> } }).pool.used;
    used.find((u) => u.resource.__knexUid === query.__knexUid)?.resource.destroy();
  });
  return {
    arm: () => {
      armed = true;
    },
  };
}

async function behave(db: Knex, cutter: { arm(): void }, text: string): Promise<void> {
  const [how, name = ""] = text.split(":") as [Behaviour, string?];
  const insert = (trx: Knex.Transaction) => trx(WIDGETS).insert({ name });
  switch (how) {
    case "ok":
      await transactionWithRetry(db, insert);
      return;
    case "knex":
      await db.transaction(insert);
      return;
    case "after":
      await transactionWithRetry(db, insert);
      throw serviceError(Code.FailedPrecondition, "BROKEN_AFTER", "failed after its change committed");
    case "inside":
      await transactionWithRetry(db, async (trx) => {
        await insert(trx);
        throw serviceError(Code.FailedPrecondition, "BROKEN_INSIDE", "failed inside its transaction");
      });
      return;
    case "commitfail":
      cutter.arm();
      await transactionWithRetry(db, insert);
      return;
    case "knexcommitfail":
      cutter.arm();
      await db.transaction(insert);
      return;
    case "retry": {
      let attempts = 0;
      cutter.arm();
      await transactionWithRetry(db, insert, { retryOn: () => ++attempts === 1 });
      return;
    }
    case "readthenfail":
      await transactionWithRetry(db, (trx) => trx(WIDGETS).select("name"));
      cutter.arm();
      await transactionWithRetry(db, insert);
      return;
    case "noop":
      await transactionWithRetry(db, (trx) => trx(WIDGETS).where({ name: "__nobody__" }).update({ name: "__still_nobody__" }));
      throw serviceError(Code.FailedPrecondition, "BROKEN_AFTER", "failed after a transaction that changed nothing");
    case "slow":
      await transactionWithRetry(db, async (trx) => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        await insert(trx);
      });
      return;
  }
  throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", `no behaviour ${text}`);
}

/**
 * Every RPC of MerchantService open to operators (SetDisplayName among them; GetMerchant is a
 * read). A display name starting `four-eyes` needs a second operator.
 */
const rules = {
  ...Object.fromEntries(MerchantService.methods.map((m) => [m.localName, { role: "operator" }])),
  setDisplayName: {
    role: "operator",
    approval: (req: { displayName: string }) => Promise.resolve(req.displayName.startsWith("four-eyes") ? { summary: `four-eyes widget ${req.displayName}` } : undefined),
  },
} as unknown as AccessRules<typeof MerchantService>;

export function widgetModule(): ServiceModule {
  let cutter: { arm(): void } | undefined;
  return {
    name: "merchant",
    services: [MerchantService],
    migrations: [widgetsMigration],
    createContext(base: BaseContext) {
      cutter = commitCutter(base.db);
      return base;
    },
    routes(router, ctx) {
      router.service(MerchantService, {
        async setDisplayName(req) {
          await behave(ctx.db, cutter!, req.displayName.replace(/^four-eyes/, "ok"));
          return {};
        },
        getMerchant() {
          return {};
        },
      });
    },
    access: () => [defineAccess(MerchantService, rules)],
  };
}

export interface WidgetService {
  running: RunningServices;
  url: string;
  db: Knex;
  stop(): Promise<void>;
}

/** The widget service on MariaDB (a database of its own) or SQLite, split mode, with the test operators' key. */
export async function startWidgetService(dialect: "mysql" | "sqlite", env: Record<string, string> = {}, logger?: Logger): Promise<WidgetService> {
  const database = dialect === "mysql" ? await createTestDatabase() : undefined;
  const dir = dialect === "sqlite" ? mkdtempSync(join(tmpdir(), "audit-widgets-")) : undefined;
  const { TEST_OPERATOR_ENV } = await import("@payments/testing");
  const running = await startServices([widgetModule()], {
    mode: "split",
    env: { ...TEST_OPERATOR_ENV, GRPC_PORT: "0", LOG_LEVEL: "fatal", ...(database ? { DATABASE_URL: database.url } : { DATA_DIR: dir! }), ...env },
    ...(logger ? { logger } : {}),
  });
  return {
    running,
    url: running.server.url,
    db: running.contexts.get("merchant")!.db,
    async stop() {
      await running.stop();
      await database?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const operator = testOperator("operator", "olcay@example.com");

/** The deadline of the tests' calls: long, as a busy machine running calls by the dozen at once needs. */
export const TEST_DEADLINE_MS = 60_000;

/** A client of the widget service acting as `who`, with nobody approving for it. */
export function widgets(url: string, who = operator) {
  return createServiceClient(MerchantService, url, { operator: who, approver: null, timeoutMs: TEST_DEADLINE_MS });
}

/** The whole chain of the service at `url`, read page by page as the CLI reads it, walked and held to its head and `published`. */
export async function verifyChain(url: string, published: readonly PublishedHead[] = [], pageSize = 7): Promise<ChainVerdict> {
  const audit = createServiceClient(AuditService, url, { operator: testOperator("viewer"), service: "merchant", timeoutMs: TEST_DEADLINE_MS });
  const walk = new ChainWalk(published);
  let after = 0n;
  let unchained = 0n;
  for (;;) {
    const page = await audit.listAuditChain({ afterSeq: after, limit: pageSize });
    if (after === 0n) unchained = page.unchainedRows;
    for (const row of page.rows) if (!walk.add(chainedRowOf(row))) return walk.finish(undefined);
    if (page.rows.length < pageSize) return walk.finish(page.head ? { seq: page.head.seq, hash: page.head.hash } : undefined, unchained);
    after = page.rows.at(-1)!.seq;
  }
}
