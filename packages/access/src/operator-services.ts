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
import { type Clock, ERROR_REASON_KEY, type Logger, serviceError, transactionWithRetry } from "@payments/kit";
import type { Knex } from "knex";
import {
  AssertionError,
  isMerchantUser,
  OPERATOR_ASSERTION_HEADER,
  roleAtLeast,
  verifyAssertionWithId,
  type ActorIdentity,
  type MerchantRole,
  type OperatorRole,
} from "./operator-assertion.js";
import { ANY_MERCHANT_ROLE, hostedModule, merchantRolesFor, neededRole, type AccessEntry, type AccessModule, type AccessRegistry } from "./access-table.js";
import { runApproved } from "./call-scope.js";
import { isWorkload, MERCHANT_USER_CARRIERS, OPERATOR_CARRIERS, WORKLOAD_HEADER, WorkloadIdentityError, type WorkloadIdentity, type WorkloadVerifier } from "./workload-identity.js";
import { appendAudit, assertionUsed, auditJson, isReplayedAssertion, recordAuditAlone, targetsWithAnswer, withoutJti, type AuditEntry } from "./operator-audit.js";
import { auditChainPage, listAudit, MAX_CHAIN_PAGE, type AuditRow } from "./audit-read.js";
import { assertionReplayed } from "./audit-participant.js";
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
    // A row written with its change before the call answered: what it made is in its answer.
    targetIds: row.after_json ? parseTargets(row.targets) : targetsWithAnswer(parseTargets(row.targets), row.answer_after_json),
    reason: row.reason,
    outcome: row.outcome,
    approvalId: row.approval_id ?? "",
    requestJson: row.request_json ?? "",
    // Written with its change before the call answered: the answer was recorded beside the row.
    afterJson: row.after_json ?? row.answer_after_json ?? "",
    requestId: row.request_id ?? "",
    traceId: row.trace_id ?? "",
    service: row.service,
    maker: row.maker ?? "",
    beforeJson: row.before_json ?? "",
    workload: row.workload ?? "",
    merchantId: row.merchant_id ?? "",
    answerOutcome: row.answer_outcome && row.answer_outcome !== row.outcome ? row.answer_outcome : "",
    seq: BigInt(row.seq ?? 0),
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
  ): Promise<{ module: AccessModule; operator: ActorIdentity; workload: WorkloadIdentity; jti: string | undefined }> {
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
    let jti: string | undefined;
    try {
      if (!publicKey) throw new AssertionError("this service has no OPERATOR_ASSERTION_PUBLIC_KEY: it accepts no operator's assertion");
      ({ actor: operator, jti } = await verifyAssertionWithId(publicKey, token, module.name, clock.now()));
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
    return { module, operator, workload, jti };
  }

  /**
   * A decision's assertion, spent once as any mutating call's: one without an id, or one that a
   * call was accepted with already, is refused (UNAUTHENTICATED), the refusal audited.
   */
  async function spend(module: AccessModule, operator: ActorIdentity, rpc: string, row: ApprovalRow, jti: string | undefined, note: string): Promise<string> {
    if (!jti) throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", "the operator assertion has no id (jti): a call that changes anything needs one, used once");
    if (await assertionUsed(module.db, jti)) {
      await recordAuditAlone(module.db, clock, logger, decisionEntry(module, operator, rpc, row, "ASSERTION_REPLAYED", note));
      throw assertionReplayed();
    }
    return jti;
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

  function decisionEntry(module: AccessModule, operator: ActorIdentity, rpc: string, row: ApprovalRow, outcome: string, note: string, jti?: string): AuditEntry {
    return {
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
      ...(jti ? { jti } : {}),
    };
  }

  /** A decision refused with nothing changed, audited on its own (its assertion spent); a racing second use of the assertion is refused as such. */
  async function refuseDecision(module: AccessModule, operator: ActorIdentity, rpc: string, row: ApprovalRow, err: ConnectError, note: string, jti: string): Promise<never> {
    const written = await recordAuditAlone(module.db, clock, logger, decisionEntry(module, operator, rpc, row, err.metadata.get(ERROR_REASON_KEY) ?? "REFUSED", note, jti));
    throw written.replayed ? assertionReplayed() : err;
  }

  /**
   * A decision and its audit row in one transaction: `change` (the conditional UPDATE that claims
   * or rejects a pending approval) and, when it took, the row, with the decider's assertion spent
   * (its unique jti the backstop of a racing second use: the decision then rolls back). false when
   * the approval was not pending any more (nothing written).
   */
  async function decide(module: AccessModule, entry: AuditEntry, change: (trx: Knex.Transaction) => Promise<boolean>): Promise<boolean> {
    try {
      return await transactionWithRetry(module.db, async (trx) => {
        if (!(await change(trx))) return false;
        await appendAudit(trx, clock, entry);
        return true;
      });
    } catch (err) {
      if (!isReplayedAssertion(err)) throw err;
      await recordAuditAlone(module.db, clock, logger, { ...withoutJti(entry), outcome: "ASSERTION_REPLAYED" });
      throw assertionReplayed();
    }
  }

  router.service(AuditService, {
    async listAuditChain(req, context) {
      // Operators' alone: the chain is the whole service's audit, every merchant's rows in it.
      const { module } = await authorize(context, "viewer", []);
      if (req.afterSeq < 0n) throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", "after_seq must be 0 or more", { field: "after_seq" });
      if (req.limit < 0 || req.limit > MAX_CHAIN_PAGE) throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", `limit must be 0..${MAX_CHAIN_PAGE}`, { field: "limit" });
      return auditChainPage(module.db, Number(req.afterSeq), req.limit === 0 ? 500 : req.limit);
    },

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
        ...(req.targetId ? { targetId: req.targetId } : {}),
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
      const { module, operator, workload, jti: token } = await authorize(context, "viewer", ANY_MERCHANT_ROLE);
      const rpc = "payments.operator.v1.ApprovalService/Approve";
      const { row, entry } = await pendingApproval(module, req.id, operator);
      const jti = await spend(module, operator, rpc, row, token, req.note);
      const refuse = (err: ConnectError): Promise<never> => refuseDecision(module, operator, rpc, row, err, req.note, jti);
      if (row.maker === operator.subject) {
        const must = isMerchantUser(operator) ? "the user who asked for it cannot approve it: another user of the merchant must" : "the operator who asked for it cannot approve it: another operator must";
        await refuse(serviceError(Code.PermissionDenied, "MAKER_CANNOT_APPROVE", must));
      }
      const denied = mayDecide(operator, row, entry, "approving");
      if (denied) await refuse(denied);
      // The claim and its audit row commit together: an approval is never run unrecorded.
      if (!(await decide(module, decisionEntry(module, operator, rpc, row, "ok", req.note, jti), (trx) => claimApproval(trx, clock, row.id, operator, req.note)))) {
        await refuse(serviceError(Code.FailedPrecondition, "APPROVAL_NOT_PENDING", `approval ${row.id} is ${approvalState(row, clock.now().getTime())}, not pending`));
      }
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
      const { module, operator, jti: token } = await authorize(context, "viewer", ANY_MERCHANT_ROLE);
      const rpc = "payments.operator.v1.ApprovalService/Reject";
      const { row, entry } = await pendingApproval(module, req.id, operator);
      if (!req.reason.trim()) throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", "reason is required", { field: "reason" });
      const jti = await spend(module, operator, rpc, row, token, req.reason);
      const denied = row.maker === operator.subject ? undefined : mayDecide(operator, row, entry, "rejecting");
      if (denied) await refuseDecision(module, operator, rpc, row, denied, req.reason, jti);
      // The rejection and its audit row commit together.
      if (!(await decide(module, decisionEntry(module, operator, rpc, row, "ok", req.reason, jti), (trx) => rejectApproval(trx, clock, row.id, operator, req.reason)))) {
        const notPending = serviceError(Code.FailedPrecondition, "APPROVAL_NOT_PENDING", `approval ${row.id} is ${approvalState(row, clock.now().getTime())}, not pending`);
        await refuseDecision(module, operator, rpc, row, notPending, req.reason, jti);
      }
      const done = await findApproval(module.db, row.id);
      return { approval: approvalMessage(done ?? row, clock.now().getTime()) };
    },
  });
}
