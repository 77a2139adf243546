import type { Command } from "commander";
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListAuditRecordsResponseSchema } from "@payments/contracts/operator";
import { parseIsoTime, parseRequiredText } from "../arguments.js";
import { SERVICES, type ServiceName } from "../clients.js";
import type { CommandContext } from "../context.js";
import { formatTime } from "../output.js";
import { fromEachService, parseServiceName } from "./approval.js";
import { registerAuditVerifyCommand } from "./audit-verify.js";

// The operators' audit: each service records every operator call to a mutating RPC (refused or
// done) and every approval step. `audit list` reads them across the services, newest first;
// `audit verify` checks each service's hash chain (audit-verify.ts).

export function registerAuditCommands(program: Command, ctx: CommandContext): void {
  const audit = program.command("audit").description("the operators' audit trail across the services, and its verification");
  registerAuditVerifyCommand(audit, ctx);
  audit
    .command("list")
    .description("audit records newest first: who did what, to which ids, why, and how it ended")
    .option("--actor <subject>", "only this operator's (their email, or a service account's name)", parseRequiredText)
    .option("--target <id>", "only those about this id (a deposit, transfer, merchant, approval…)", parseRequiredText)
    .option("--since <time>", "only from this time (ISO 8601)", parseIsoTime)
    .option("--until <time>", "only before this time (ISO 8601)", parseIsoTime)
    .option("--service <name>", `only this service's: ${SERVICES.join("|")}`, parseServiceName)
    .option("--limit <n>", "at most this many records (1..500, default 50)", (v) => Number.parseInt(v, 10))
    .addHelpText("after", `\nWith --json, prints {"records":[…]}.`)
    .action(async (opts: { actor?: string; target?: string; since?: Date; until?: Date; service?: ServiceName; limit?: number }, cmd: Command) => {
      const session = ctx.session(cmd);
      const limit = opts.limit ?? 50;
      const services = opts.service ? [opts.service] : [...SERVICES];
      const pages = await fromEachService(services, opts.service !== undefined, (s) =>
        session.audit(s).listAuditRecords({
          actor: opts.actor ?? "",
          targetId: opts.target ?? "",
          ...(opts.since ? { since: timestampFromDate(opts.since) } : {}),
          ...(opts.until ? { until: timestampFromDate(opts.until) } : {}),
          limit,
        }),
      );
      const records = pages
        .flatMap((p) => p.records)
        .sort((a, b) => timestampDate(b.at!).getTime() - timestampDate(a.at!).getTime())
        .slice(0, limit);
      const { out } = session;
      if (out.json) return out.message(ListAuditRecordsResponseSchema, create(ListAuditRecordsResponseSchema, { records, nextCursor: "" }));
      out.table(
        ["AT", "ACTOR", "ROLE", "SERVICE", "RPC", "TARGETS", "OUTCOME", "REASON"],
        records.map((r) => [formatTime(r.at), r.maker ? `${r.actor} (approving ${r.maker})` : r.actor || "(none)", r.role || "—", r.service, r.rpc.split("/").at(-1) ?? r.rpc, r.targetIds.join(",") || "—", r.outcome, r.reason || "—"]),
        "No audit records.",
      );
    });
}
