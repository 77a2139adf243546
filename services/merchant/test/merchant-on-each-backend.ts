import type { TestFn } from "ava";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { MerchantChangedSchema, MerchantService, type MerchantChanged } from "@payments/contracts/merchant";
import type { RunningServices, Subscription } from "@payments/kit";
import type { Knex } from "knex";
import { createServiceClient, createTestDatabase, testMerchantUser } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

/** One in-process merchant service, as the tests registered for one backend see it. */
export interface MerchantOnBackend {
  /** "SQLite" or "MariaDB", for the tests' titles. */
  name: string;
  /** A client of the service as the test operator (and its approver). */
  client(): Client<typeof MerchantService>;
  /** A client of the gateway's own calls (GetCredentials: the secrets that verify a merchant's requests). */
  gateway(): Client<typeof MerchantService>;
  /** A client signed in as one merchant's dashboard user in that role. */
  asUser(merchantId: string, role: Parameters<typeof testMerchantUser>[1]): Client<typeof MerchantService>;
  /** Every MerchantChanged event the service published, in order. */
  published: MerchantChanged[];
  /** The service's address, for clients of other kinds (the audit, a gateway speaking for a merchant). */
  url(): string;
  /** The service's database, to read what a refused call must have left unchanged. */
  db(): Knex;
}

interface Backend {
  name: string;
  env(): Promise<Record<string, string>>;
  cleanUp(): Promise<void>;
}

/**
 * Registers `register`'s tests twice: once against a merchant service on SQLite (a temporary
 * folder named after `dirPrefix`), once on a fresh MariaDB database; each service starts before
 * its tests, its MerchantChanged events are collected, and all is stopped and dropped after.
 */
export function onEachBackend(test: TestFn, dirPrefix: string, register: (merchant: MerchantOnBackend) => void): void {
  const sqliteDir = mkdtempSync(join(tmpdir(), dirPrefix));
  let dropDatabase: (() => Promise<void>) | undefined;

  const backends: Backend[] = [
    {
      name: "SQLite",
      env: async () => ({ DATA_DIR: sqliteDir }),
      cleanUp: async () => rmSync(sqliteDir, { recursive: true, force: true }),
    },
    {
      name: "MariaDB",
      async env() {
        const database = await createTestDatabase();
        dropDatabase = database.drop;
        return { DATABASE_URL: database.url };
      },
      cleanUp: async () => dropDatabase?.(),
    },
  ];

  for (const backend of backends) {
    let running: RunningServices | undefined;
    let watcher: Subscription | undefined;
    const published: MerchantChanged[] = [];

    test.before(async () => {
      running = await startInProcess(["merchant"], { env: { ...(await backend.env()), LOG_LEVEL: "fatal", MASTER_KEY: randomBytes(32).toString("hex") } });
      watcher = await running.bus.watch([MERCHANT_CHANGED_TOPIC], async (message) => {
        published.push(fromBinary(MerchantChangedSchema, message.data));
      });
    });

    test.after.always(async () => {
      await watcher?.stop();
      await running?.stop();
      await backend.cleanUp();
    });

    register({
      name: backend.name,
      client: () => createServiceClient(MerchantService, running!.server.url),
      gateway: () => createServiceClient(MerchantService, running!.server.url, { operator: null, workload: "gateway" }),
      asUser: (merchantId, role) => createServiceClient(MerchantService, running!.server.url, { operator: testMerchantUser(merchantId, role), approver: null }),
      published,
      url: () => running!.server.url,
      db: () => running!.contexts.get("merchant")!.db,
    });
  }
}
