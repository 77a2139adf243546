import type { DescService } from "@bufbuild/protobuf";
import { type RunningServices } from "@payments/kit";
import { AUDIT_TABLES } from "@payments/access";
import { SERVICE_NAMES, serviceModule, type ServiceName } from "./in-process.js";
import { createServiceClient, type TestClientOptions } from "./operators.js";

// The walk of every RPC of every service, from the proto descriptors, that the access tests
// make (the operators' roles, the merchants' scope), and what they compare before and after a
// call: the rows of a service's SQLite database.

/** One RPC of one service, as its module hosts it. */
export interface Rpc {
  module: ServiceName;
  service: DescService;
  method: DescService["methods"][number];
}

/** Every RPC of every service (SERVICE_NAMES), in the modules' order. */
export function everyRpc(): Rpc[] {
  return SERVICE_NAMES.flatMap((name) => serviceModule(name).services.flatMap((service) => service.methods.map((method) => ({ module: name, service, method }))));
}

/** One RPC, called with any request. */
export type RpcCall = (request: unknown) => Promise<unknown>;

/** `rpc` of the services at `url`, called by createServiceClient with `options` (who acts, who approves). */
export function rpcCall(rpc: Rpc, url: string, options: TestClientOptions): RpcCall {
  const client = createServiceClient(rpc.service, url, options) as unknown as Record<string, RpcCall>;
  return (request) => client[rpc.method.localName]!(request);
}

/**
 * The rows of every table of `module`'s SQLite database in `running` but its audit and knex's
 * own, as text (a table's name, then its rows as JSON, one a line), only those that `keep`
 * holds: "nothing changed" is this being equal before and after.
 */
export async function sqliteRows(running: RunningServices, module: string, keep: (row: string) => boolean = () => true): Promise<string> {
  const knex = running.contexts.get(module)!.db;
  const tables = await knex.raw<Array<{ name: string }>>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  const parts: string[] = [];
  for (const { name } of tables) {
    if (AUDIT_TABLES.includes(name) || name.startsWith("knex_")) continue;
    const rows = (await knex(name).select()).map((r) => JSON.stringify(r, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString("hex") : v)));
    parts.push(name, ...rows.filter(keep));
  }
  return parts.join("\n");
}
