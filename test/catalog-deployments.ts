import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAllInOne, type AllInOne } from "@payments/all-in-one";
import { startGateway } from "@payments/gateway";
import { startSplitDeployment, type SplitDeployment } from "@payments/testing/services";
import { TEST_OPERATOR_ENV, TEST_OPERATOR_PRIVATE_KEY_PEM } from "@payments/testing";
import { signedFetch, type BankEntry, type Credentials } from "./helpers.js";

/** The caches' TTL in both deployments: only a CatalogChanged event can explain a prompt change. */
export const LONG_TTL = "10m";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

/** The two deployments the bank-list suites compare (catalog-cache, available-banks-truth). */
export interface CatalogDeployments {
  /** Merchant, bank-catalog and deposit services, each alone (MySQL, JetStream). */
  split: SplitDeployment;
  /** The split deployment's gateway, which hears CatalogChanged over JetStream. */
  gateway: Gateway;
  /** Hears no events (no NATS_URL, no bus given): only its CATALOG_CACHE_TTL of 1 s bounds its lists. */
  deafGateway: Gateway;
  /** SQLite, the in-process bus. */
  allInOne: AllInOne;
  stop(): Promise<void>;
}

/**
 * Both deployments, every cache at LONG_TTL: split with its listening and its deaf gateway, and
 * all-in-one on a data folder of its own. `masterKeys`: the split merchant service's and the
 * all-in-one's MASTER_KEY.
 */
export async function startCatalogDeployments(options: { token: string; masterKeys: [string, string]; receivingAccounts?: boolean }): Promise<CatalogDeployments> {
  const dataDir = mkdtempSync(join(tmpdir(), "catalog-deployments-"));
  // What has started, last first: a start that fails part-way stops the rest.
  const started: Array<{ stop(): Promise<void> }> = [{ stop: async () => rmSync(dataDir, { recursive: true, force: true }) }];
  const stop = async () => {
    for (const part of started.splice(0).reverse()) await part.stop();
  };
  try {
    const split = await startSplitDeployment({
      services: ["merchant", "bank-catalog", "deposit"],
      token: options.token,
      common: { CATALOG_CACHE_TTL: LONG_TTL },
      env: { merchant: { MASTER_KEY: options.masterKeys[0] } },
      receivingAccounts: options.receivingAccounts,
    });
    started.push(split);
    const gatewayEnv = {
      ...TEST_OPERATOR_ENV,
      PORT: "0",
      HOST: "127.0.0.1",
      INTERNAL_API_TOKEN: options.token,
      // Payout and callback-sender are not called by these suites: the deposit service's address stands in.
      ...split.serviceUrls(split.url("deposit")),
      CREDENTIAL_CACHE_TTL: LONG_TTL,
      CATALOG_CACHE_TTL: LONG_TTL,
      LOG_LEVEL: "warn",
    };
    const gateway = await startGateway({ env: { ...gatewayEnv, ...split.js } });
    started.push(gateway);
    const deafGateway = await startGateway({ env: { ...gatewayEnv, CATALOG_CACHE_TTL: "1s", LOG_LEVEL: "error" } });
    started.push(deafGateway);
    // The test operators' key pair, so the harness clients and runCli act on both deployments alike.
    const env: Record<string, string | undefined> = { ...process.env, ...TEST_OPERATOR_ENV, OPERATOR_ASSERTION_PRIVATE_KEY: TEST_OPERATOR_PRIVATE_KEY_PEM, PORT: "0", GRPC_PORT: "0", CONSOLE_PORT: "0", DATA_DIR: dataDir, MASTER_KEY: options.masterKeys[1], LOG_LEVEL: "warn", CATALOG_CACHE_TTL: LONG_TTL, CREDENTIAL_CACHE_TTL: LONG_TTL };
    delete env.DATABASE_URL;
    delete env.NATS_URL;
    delete env.INTERNAL_API_TOKEN;
    const allInOne = await startAllInOne({ env });
    started.push(allInOne);
    return { split, gateway, deafGateway, allInOne, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The bank list a gateway offers the merchant (GET /v1/available-banks, which must answer 200). */
export async function offered(gatewayUrl: string, merchant: Credentials): Promise<BankEntry[]> {
  const res = await signedFetch(gatewayUrl, merchant, "GET", "/v1/available-banks");
  if (res.status !== 200) throw new Error(`bank list: ${res.status} ${JSON.stringify(res.json)}`);
  return (res.json.data as { banks: BankEntry[] }).banks;
}
