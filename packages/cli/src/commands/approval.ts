import { InvalidArgumentError, type Command } from "commander";
import { create, fromBinary, toJson } from "@bufbuild/protobuf";
import { CreateMerchantResponseSchema } from "@payments/contracts/merchant";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { ApprovalSchema, ApprovalStatus, ListApprovalsResponseSchema, type Approval } from "@payments/contracts/operator";
import { errorInfo } from "@payments/kit";
import { parseRequiredText } from "../arguments.js";
import { SERVICES, type ServiceName } from "../clients.js";
import type { CommandContext, Session } from "../context.js";
import { CommandFailed } from "../errors.js";
import { formatTime, type Output } from "../output.js";
import { credentialsJson, printMerchant, printSecret, printWebhookSecret } from "./merchant.js";

/** The RPC whose approved answer carries secrets the approver is shown once (a live merchant's creation). */
const CREATE_MERCHANT = "payments.merchant.v1.MerchantService/CreateMerchant";

// Four-eyes: a request that needs a second operator (a live balance adjustment, a live return,
// a live switch, …) waits in the service that would run it. These commands find those waiting
// and let another operator approve (the service runs the stored request once) or reject it.

const STATUS_NAMES = ["pending", "approved", "rejected", "expired"] as const;
const STATUS_OF: Record<(typeof STATUS_NAMES)[number], ApprovalStatus> = {
  pending: ApprovalStatus.PENDING,
  approved: ApprovalStatus.APPROVED,
  rejected: ApprovalStatus.REJECTED,
  expired: ApprovalStatus.EXPIRED,
};

function parseStatus(value: string): ApprovalStatus {
  const name = value.trim().toLowerCase() as (typeof STATUS_NAMES)[number];
  const status = STATUS_OF[name] as ApprovalStatus | undefined;
  if (status === undefined) throw new InvalidArgumentError(`expected one of ${STATUS_NAMES.join(", ")}.`);
  return status;
}

export function parseServiceName(value: string): ServiceName {
  const name = value.trim().toLowerCase();
  if (!(SERVICES as readonly string[]).includes(name)) throw new InvalidArgumentError(`expected one of ${SERVICES.join(", ")}.`);
  return name as ServiceName;
}

export function approvalStatusLabel(status: ApprovalStatus): string {
  return (Object.entries(STATUS_OF).find(([, s]) => s === status)?.[0] ?? "unknown");
}

function printApproval(out: Output, a: Approval): void {
  const fields: Array<[string, string]> = [
    ["id", a.id],
    ["status", approvalStatusLabel(a.status)],
    ["what", a.summary],
    ["service", `${a.service} (${a.rpc})`],
    ["asked by", `${a.maker} (${a.makerRole})`],
    ["why", a.reason || "—"],
    ["asked at", formatTime(a.createdAt)],
    ["expires at", formatTime(a.expiresAt)],
    ["request", a.requestJson],
  ];
  if (a.decidedBy) fields.push(["decided by", a.decidedBy], ["decided at", formatTime(a.decidedAt)], ["note", a.decisionNote || "—"]);
  if (a.outcome) fields.push(["outcome", a.outcome], ["answer", a.responseJson || "—"]);
  out.fields(fields);
}

/**
 * `call` for each service, answers in order. A process that hosts only some of the services
 * (one --grpc-url for a partial deployment) answers SERVICE_NOT_HOSTED for the others: skipped,
 * unless the operator named that service.
 */
export async function fromEachService<T>(services: readonly ServiceName[], named: boolean, call: (service: ServiceName) => Promise<T>): Promise<T[]> {
  const answers = await Promise.all(
    services.map(async (service) => {
      try {
        return [await call(service)];
      } catch (err) {
        if (!named && errorInfo(err).reason === "SERVICE_NOT_HOSTED") return [];
        throw err;
      }
    }),
  );
  return answers.flat();
}

/** The message of a failed run's stored answer ({"code","message"}). */
function failureMessage(responseJson: string): string {
  try {
    return (JSON.parse(responseJson) as { message?: string }).message ?? responseJson;
  } catch {
    return responseJson;
  }
}

/** The approval with this id, from whichever service holds it (an id names no service). */
async function findApproval(session: Session, id: string): Promise<{ service: ServiceName; approval: Approval }> {
  for (const service of SERVICES) {
    try {
      const { approval } = await session.approvals(service).getApproval({ id });
      if (approval) return { service, approval };
    } catch (err) {
      const info = errorInfo(err);
      if (info.code === Code.NotFound && (info.reason === "APPROVAL_NOT_FOUND" || info.reason === "SERVICE_NOT_HOSTED")) continue;
      throw err;
    }
  }
  throw new CommandFailed(`no approval ${id} in any service`);
}

export function registerApprovalCommands(program: Command, ctx: CommandContext): void {
  const group = program
    .command("approval")
    .description("requests waiting for a second operator (four-eyes): list, show, approve (runs it once) or reject them");

  group
    .command("list")
    .description("approvals newest first, across the services (or one with --service)")
    .option("--status <status>", `only these: ${STATUS_NAMES.join("|")} (default: every status)`, parseStatus)
    .option("--service <name>", `only this service's: ${SERVICES.join("|")}`, parseServiceName)
    .option("--limit <n>", "at most this many from each service (1..500, default 50)", (v) => Number.parseInt(v, 10))
    .addHelpText("after", `\nWith --json, prints {"approvals":[…]}.`)
    .action(async (opts: { status?: ApprovalStatus; service?: ServiceName; limit?: number }, cmd: Command) => {
      const session = ctx.session(cmd);
      const services = opts.service ? [opts.service] : [...SERVICES];
      const pages = await fromEachService(services, opts.service !== undefined, (s) => session.approvals(s).listApprovals({ status: opts.status ?? ApprovalStatus.UNSPECIFIED, limit: opts.limit ?? 0 }));
      const approvals = pages.flatMap((p) => p.approvals).sort((a, b) => timestampDate(b.createdAt!).getTime() - timestampDate(a.createdAt!).getTime());
      const { out } = session;
      if (out.json) return out.message(ListApprovalsResponseSchema, create(ListApprovalsResponseSchema, { approvals, nextCursor: "" }));
      out.table(
        ["ID", "STATUS", "SERVICE", "ASKED BY", "ASKED AT", "WHAT"],
        approvals.map((a) => [a.id, approvalStatusLabel(a.status), a.service, a.maker, formatTime(a.createdAt), a.summary]),
        "No approvals.",
      );
    });

  group
    .command("show")
    .description("one approval: what it asks, who asked and why, the exact request, and its outcome")
    .argument("<id>", "the approval's id (apr_…)")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const session = ctx.session(cmd);
      const { approval } = await findApproval(session, id);
      if (session.out.json) return session.out.message(ApprovalSchema, approval);
      printApproval(session.out, approval);
    });

  group
    .command("approve")
    .description("approve a pending request: its service runs it now, once, as the asker's and your joint action (you cannot approve your own)")
    .argument("<id>", "the approval's id (apr_…)")
    .option("--note <text>", "what you checked (recorded with the decision)", parseRequiredText)
    .action(async (id: string, opts: { note?: string }, cmd: Command) => {
      const session = ctx.session(cmd);
      const { service } = await findApproval(session, id);
      const { approval, answer } = await session.approvals(service).approve({ id, note: opts.note ?? "" });
      if (!approval) throw new Error("the service returned no approval");
      // A live merchant's creation: its secrets come back to the approver, here, once.
      const made = approval.outcome === "ok" && approval.rpc === CREATE_MERCHANT && answer.length > 0 ? fromBinary(CreateMerchantResponseSchema, answer) : undefined;
      if (session.out.json) {
        if (made?.merchant) session.out.data({ ...(toJson(ApprovalSchema, approval) as Record<string, unknown>), merchant: { ...credentialsJson(made.merchant, made.apiSecret), webhookSecret: made.webhookSecret } });
        else session.out.message(ApprovalSchema, approval);
      } else {
        session.out.line(approval.outcome === "ok" ? `Approved and done: ${approval.summary}.` : `Approved, but the request failed when run: ${approval.outcome}.`);
        printApproval(session.out, approval);
        if (made?.merchant) {
          session.out.line("The live merchant is made; its secrets are shown to you, once:");
          printMerchant(session.out, made.merchant);
          printSecret(session.out, made.apiSecret);
          printWebhookSecret(session.out, made.webhookSecret);
        }
      }
      // A script must see that the approved request did not do what it asked.
      if (approval.outcome !== "ok") throw new CommandFailed(`${approval.outcome}: the approved request failed when run (${failureMessage(approval.responseJson)})`);
    });

  group
    .command("reject")
    .description("reject a pending request: nothing runs (the asker may withdraw their own this way too)")
    .argument("<id>", "the approval's id (apr_…)")
    .requiredOption("--reason <text>", "why (required; recorded with the decision)", parseRequiredText)
    .action(async (id: string, opts: { reason: string }, cmd: Command) => {
      const session = ctx.session(cmd);
      const { service } = await findApproval(session, id);
      const { approval } = await session.approvals(service).reject({ id, reason: opts.reason });
      if (!approval) throw new Error("the service returned no approval");
      if (session.out.json) return session.out.message(ApprovalSchema, approval);
      session.out.line(`Rejected: ${approval.summary}.`);
      printApproval(session.out, approval);
    });
}
