import { toBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type ConnectRouter, type HandlerContext, type Transport } from "@connectrpc/connect";
import {
  ApprovalService,
  AuditService,
  type Approval,
  type AuditRecord,
} from "@payments/contracts/operator";
import { approvalStatusFromProto, approvalStatusToProto } from "@payments/contracts/statuses";
import { type Clock, ERROR_REASON_KEY, type Logger, serviceError } from "@payments/kit";
import {
  AssertionError,
  isMerchantUser,
  OPERATOR_ASSERTION_HEADER,
  roleAtLeast,
  verifyAssertion,
  type ActorIdentity,
  type MerchantRole,
  type OperatorRole,
} from "./operator-assertion.js";
import { ANY_MERCHANT_ROLE, hostedModule, merchantRolesFor, neededRole, type AccessEntry, type AccessModule, type AccessRegistry } from "./access-table.js";
import { runApproved } from "./call-scope.js";
import { isWorkload, MERCHANT_USER_CARRIERS, OPERATOR_CARRIERS, WORKLOAD_HEADER, WorkloadIdentityError, type WorkloadIdentity, type WorkloadVerifier } from "./workload-identity.js";
import { auditJson, listAudit, recordAudit, type AuditRow } from "./operator-audit.js";
import {
  approvalState,
  claimApproval,
  findApproval,
  listApprovals,
  recordApprovalOutcome,
  rejectApproval,
  storedRequest,
  type ApprovalRow,
} from "./approvals.js";
import type { KeyObject } from "node:crypto";

export interface OperatorServicesOptions {
  registry: AccessRegistry;
  workloads: WorkloadVerifier;
  publicKey: KeyObject | undefined;
  clock: Clock;
  logger: Logger;
  /** This process's own handlers (the in-process transport): where an approved request runs. */
  transport: Transport;
}

const MAX_LIMIT = 500;

function limitOf(value: number): number {
  if (value < 0 || value > MAX_LIMIT) throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", `limit must be 0..${MAX_LIMIT}`, { field: "limit" });
  return value === 0 ? 50 : value;
}

function parseTargets(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

function approvalMessage(row: ApprovalRow, now: number): Approval {
  return {
    $typeName: "payments.operator.v1.Approval",
    id: row.id,
    service: row.service,
    rpc: row.rpc,
    summary: row.summary,
    reason: row.reason,
    maker: row.maker,
    makerRole: row.maker_role,
    createdAt: timestampFromMs(Number(row.created_at)),
    expiresAt: timestampFromMs(Number(row.expires_at)),
    status: approvalStatusToProto(approvalState(row, now)),
    decidedBy: row.decided_by ?? "",
    ...(row.decided_at !== null ? { decidedAt: timestampFromMs(Number(row.decided_at)) } : {}),
    decisionNote: row.decision_note ?? "",
    outcome: row.outcome ?? "",
    requestJson: row.request_json,
    responseJson: row.response_json ?? "",
    targetIds: parseTargets(row.targets),
  };
}

/** An audit row as the AuditService answers it: what the console shows of its own audit beside the services'. */
export function auditRecordOf(row: AuditRow): AuditRecord {
  return {
    $typeName: "payments.operator.v1.AuditRecord",
    id: row.id,
    at: timestampFromMs(Number(row.created_at)),
    actor: row.actor,
    actorKind: row.actor_kind,
    role: row.role,
    rpc: row.rpc,
    targetIds: parseTargets(row.targets),
    reason: row.reason,
    outcome: row.outcome,
    approvalId: row.approval_id ?? "",
    requestJson: row.request_json ?? "",
    afterJson: row.after_json ?? "",
    requestId: row.request_id ?? "",
    traceId: row.trace_id ?? "",
    service: row.service,
    maker: row.maker ?? "",
    beforeJson: row.before_json ?? "",
    workload: row.workload ?? "",
    merchantId: row.merchant_id ?? "",
  };
}

/**
 * The audit and approval services every service serves: the module is the one the call names
 * (x-payments-service; the only one when the process hosts one), and the operator's assertion
 * must be for that module. Reading needs a viewer; approving or rejecting needs the role the
 * stored request's RPC needs, and never its maker.
 */
export function operatorRoutes(router: ConnectRouter, options: OperatorServicesOptions): void {
  const { registry, workloads, publicKey, clock, logger, transport } = options;

  /**
   * The caller: an operator of at least `needed`, or a merchant's user of one of `merchantRoles`
   * (none: closed to merchants' users). What a merchant's user reads is their merchant's alone.
   */
  async function authorize(
    context: HandlerContext,
    needed: OperatorRole,
    merchantRoles: readonly MerchantRole[],
  ): Promise<{ module: AccessModule; operator: ActorIdentity; workload: WorkloadIdentity }> {
    const module = hostedModule(registry, context.requestHeader);
    let workload: WorkloadIdentity;
    try {
      const header = context.requestHeader.get(WORKLOAD_HEADER);
      if (!header) throw new WorkloadIdentityError(`this needs the caller's workload identity (${WORKLOAD_HEADER})`);
      workload = await workloads.verify(header, module.name);
    } catch (err) {
      if (err instanceof WorkloadIdentityError) throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", err.message);
      throw err;
    }
    const token = context.requestHeader.get(OPERATOR_ASSERTION_HEADER);
    if (!token) throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", `this needs a signed operator assertion (${OPERATOR_ASSERTION_HEADER})`);
    let operator: ActorIdentity;
    try {
      if (!publicKey) throw new AssertionError("this service has no OPERATOR_ASSERTION_PUBLIC_KEY: it accepts no operator's assertion");
      operator = await verifyAssertion(publicKey, token, module.name, clock.now());
    } catch (err) {
      if (err instanceof AssertionError) throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", err.message);
      throw err;
    }
    // Audit and approvals are people's: only a workload that carries people of the actor's kind brings them.
    if (!isWorkload(workload, isMerchantUser(operator) ? MERCHANT_USER_CARRIERS : OPERATOR_CARRIERS)) {
      throw serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${workload.id} does not carry ${isMerchantUser(operator) ? "a merchant user's" : "an operator's"} calls`);
    }
    if (isMerchantUser(operator)) {
      if (!merchantRoles.includes(operator.role)) throw serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `this is not open to the ${operator.role} role`);
    } else if (!roleAtLeast(operator.role, needed)) throw serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `this needs the ${needed} role`);
    return { module, operator, workload };
  }

  /** Whether `actor` may decide (approve, or reject when not its maker) an approval of `entry`'s RPC for this request. */
  function mayDecide(actor: ActorIdentity, row: ApprovalRow, entry: AccessEntry, verb: "approving" | "rejecting"): ConnectError | undefined {
    const request = storedRequest(row, entry.method);
    if (isMerchantUser(actor)) {
      if (!merchantRolesFor(entry.access, request).includes(actor.role)) return serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${verb} ${row.rpc} is not open to the ${actor.role} role`);
      return undefined;
    }
    if (row.merchant_id) return serviceError(Code.PermissionDenied, "MERCHANT_APPROVAL", `approval ${row.id} is the merchant's own four-eyes: a second user of the merchant decides it`);
    const needed = neededRole(entry.access, request);
    if (!needed) return serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${verb} ${row.rpc} is not an operator's action`);
    return roleAtLeast(actor.role, needed) ? undefined : serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${verb} ${row.rpc} needs the ${needed} role`);
  }

  async function pendingApproval(module: AccessModule, id: string, actor: ActorIdentity) {
    const found = id ? await findApproval(module.db, id) : undefined;
    // Another merchant's approval, to a merchant's user, does not exist.
    const row = found && isMerchantUser(actor) && found.merchant_id !== actor.merchantId ? undefined : found;
    if (!row) throw serviceError(Code.NotFound, "APPROVAL_NOT_FOUND", `no approval ${id} in the ${module.name} service`, { field: "id" });
    const entry = registry.lookup(row.rpc.slice(0, row.rpc.lastIndexOf("/")), row.rpc.slice(row.rpc.lastIndexOf("/") + 1));
    if (!entry) throw serviceError(Code.FailedPrecondition, "APPROVAL_NOT_PENDING", `approval ${id} is for ${row.rpc}, which this service no longer serves`);
    return { row, entry };
  }

  async function decisionAudit(module: AccessModule, operator: ActorIdentity, rpc: string, row: ApprovalRow, outcome: string, note: string): Promise<void> {
    await recordAudit(module.db, clock, logger, {
      service: module.name,
      rpc,
      actor: operator.subject,
      ...(isMerchantUser(operator) ? { merchantId: operator.merchantId } : {}),
      actorKind: operator.kind,
      role: operator.role,
      targets: [row.id, ...parseTargets(row.targets)],
      reason: note,
      outcome,
      approvalId: row.id,
      maker: row.maker,
    });
  }

  router.service(AuditService, {
    async listAuditRecords(req, context) {
      // A merchant's trail is its owner's to read.
      const { module, operator } = await authorize(context, "viewer", ["owner"]);
      const page = await listAudit(module.db, {
        ...(isMerchantUser(operator) ? { merchantId: operator.merchantId } : {}),
        ...(req.actor ? { actor: req.actor } : {}),
        ...(req.targetId ? { targetId: req.targetId } : {}),
        ...(req.since ? { since: timestampDate(req.since).getTime() } : {}),
        ...(req.until ? { until: timestampDate(req.until).getTime() } : {}),
        limit: limitOf(req.limit),
        ...(req.cursor ? { cursor: req.cursor } : {}),
      });
      if (page === "bad-cursor") throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", "cursor is not one this service issued", { field: "cursor" });
      return { records: page.rows.map(auditRecordOf), nextCursor: page.nextCursor };
    },
  });

  router.service(ApprovalService, {
    async listApprovals(req, context) {
      const { module, operator } = await authorize(context, "viewer", ANY_MERCHANT_ROLE);
      const state = approvalStatusFromProto(req.status);
      const page = await listApprovals(module.db, clock, {
        ...(state ? { state } : {}),
        limit: limitOf(req.limit),
        ...(req.cursor ? { cursor: req.cursor } : {}),
        merchantId: isMerchantUser(operator) ? operator.merchantId : null,
      });
      const now = clock.now().getTime();
      return { approvals: page.rows.map((r) => approvalMessage(r, now)), nextCursor: page.nextCursor };
    },

    async getApproval(req, context) {
      const { module, operator } = await authorize(context, "viewer", ANY_MERCHANT_ROLE);
      const { row } = await pendingApproval(module, req.id, operator);
      return { approval: approvalMessage(row, clock.now().getTime()) };
    },

    async approve(req, context) {
      const { module, operator, workload } = await authorize(context, "viewer", ANY_MERCHANT_ROLE);
      const rpc = "payments.operator.v1.ApprovalService/Approve";
      const { row, entry } = await pendingApproval(module, req.id, operator);
      const refuse = async (err: ConnectError): Promise<never> => {
        await decisionAudit(module, operator, rpc, row, err.metadata.get(ERROR_REASON_KEY) ?? "REFUSED", req.note);
        throw err;
      };
      if (row.maker === operator.subject) {
        const must = isMerchantUser(operator) ? "the user who asked for it cannot approve it: another user of the merchant must" : "the operator who asked for it cannot approve it: another operator must";
        await refuse(serviceError(Code.PermissionDenied, "MAKER_CANNOT_APPROVE", must));
      }
      const denied = mayDecide(operator, row, entry, "approving");
      if (denied) await refuse(denied);
      if (!(await claimApproval(module.db, clock, row.id, operator, req.note))) {
        await refuse(serviceError(Code.FailedPrecondition, "APPROVAL_NOT_PENDING", `approval ${row.id} is ${approvalState(row, clock.now().getTime())}, not pending`));
      }
      await decisionAudit(module, operator, rpc, row, "ok", req.note);
      // Run the stored request through this process's own handlers and interceptors, as the
      // approver (the assertion they came with) with the approval let past: audited there too.
      const message = storedRequest(row, entry.method);
      const headers = new Headers({ [OPERATOR_ASSERTION_HEADER]: context.requestHeader.get(OPERATOR_ASSERTION_HEADER) ?? "" });
      const requestId = context.requestHeader.get("x-request-id");
      if (requestId) headers.set("x-request-id", requestId);
      const client = createClient(entry.service, transport) as unknown as Record<string, (m: unknown, o: { headers: Headers }) => Promise<unknown>>;
      const call = client[entry.method.localName];
      if (!call) throw new Error(`no client method ${entry.method.localName}`);
      let outcome = "ok";
      let responseJson: string;
      let answer = new Uint8Array();
      try {
        const response = await runApproved({ approvalId: row.id, module: module.name, rpc: row.rpc, maker: row.maker, makerRole: row.maker_role, workload }, () =>
          call(message, { headers }),
        );
        responseJson = auditJson(entry.method.output, response as never);
        answer = toBinary(entry.method.output, response as never);
      } catch (err) {
        const error = ConnectError.from(err);
        outcome = error.metadata.get(ERROR_REASON_KEY) ?? (Code[error.code] || "UNKNOWN");
        responseJson = JSON.stringify({ code: Code[error.code], message: error.rawMessage });
      }
      await recordApprovalOutcome(module.db, row.id, outcome, responseJson);
      const done = await findApproval(module.db, row.id);
      return { approval: approvalMessage(done ?? row, clock.now().getTime()), answer };
    },

    async reject(req, context) {
      const { module, operator } = await authorize(context, "viewer", ANY_MERCHANT_ROLE);
      const rpc = "payments.operator.v1.ApprovalService/Reject";
      const { row, entry } = await pendingApproval(module, req.id, operator);
      if (!req.reason.trim()) throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", "reason is required", { field: "reason" });
      const denied = row.maker === operator.subject ? undefined : mayDecide(operator, row, entry, "rejecting");
      if (denied) {
        await decisionAudit(module, operator, rpc, row, denied.metadata.get(ERROR_REASON_KEY) ?? "PERMISSION_DENIED", req.reason);
        throw denied;
      }
      if (!(await rejectApproval(module.db, clock, row.id, operator, req.reason))) {
        await decisionAudit(module, operator, rpc, row, "APPROVAL_NOT_PENDING", req.reason);
        throw serviceError(Code.FailedPrecondition, "APPROVAL_NOT_PENDING", `approval ${row.id} is ${approvalState(row, clock.now().getTime())}, not pending`);
      }
      await decisionAudit(module, operator, rpc, row, "ok", req.reason);
      const done = await findApproval(module.db, row.id);
      return { approval: approvalMessage(done ?? row, clock.now().getTime()) };
    },
  });
}
