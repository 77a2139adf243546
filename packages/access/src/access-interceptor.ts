import type { KeyObject } from "node:crypto";
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type UnaryRequest, type StreamRequest } from "@connectrpc/connect";
import { ERROR_REASON_KEY, serviceError, type Clock, type Logger } from "@payments/kit";
import {
  isMutating,
  merchantRolesFor,
  namesAnotherMerchant,
  neededRole,
  pinToMerchant,
  targetsOf,
  type AccessEntry,
  type AccessRegistry,
  type ApprovalNeed,
  type RpcAccess,
} from "./access-table.js";
import { approvedRunScope, callScope, type ApprovedRun, type CallScope } from "./call-scope.js";
import { requestApproval } from "./approvals.js";
import { speakForNoMerchant } from "./outgoing-identity.js";
import { AssertionError, isMerchantUser, OPERATOR_ASSERTION_HEADER, roleAtLeast, verifyAssertion, type ActorIdentity, type MerchantUserIdentity, type OperatorIdentity } from "./operator-assertion.js";
import { recordAudit, type AuditEntry } from "./operator-audit.js";
import {
  isWorkload,
  MERCHANT_USER_CARRIERS,
  OPERATOR_CARRIERS,
  WORKLOAD_HEADER,
  WorkloadIdentityError,
  type MerchantVoice,
  type WorkloadIdentity,
  type WorkloadVerifier,
} from "./workload-identity.js";

export interface AccessInterceptorOptions {
  registry: AccessRegistry;
  workloads: WorkloadVerifier;
  /** OPERATOR_ASSERTION_PUBLIC_KEY; without it every person's call is refused. */
  publicKey: KeyObject | undefined;
  clock: Clock;
  logger: Logger;
}

function reasonOf(err: unknown): string {
  if (err instanceof ConnectError) return err.metadata.get(ERROR_REASON_KEY) ?? (Code[err.code] || String(err.code));
  return "INTERNAL";
}

/** What another merchant's thing answers a merchant's user or key: the same as a thing that does not exist. */
function notFound(): ConnectError {
  return serviceError(Code.NotFound, "NOT_FOUND", "not found");
}

function denied(message: string): ConnectError {
  return serviceError(Code.PermissionDenied, "PERMISSION_DENIED", message);
}

function unauthenticated(message: string): ConnectError {
  return serviceError(Code.Unauthenticated, "UNAUTHENTICATED", message);
}

/** The ids of what a call answered (`{ merchant: { id } }`): a thing it created is found in the audit by its new id. */
function madeIds(response: unknown): string[] {
  if (!response || typeof response !== "object") return [];
  return Object.values(response).flatMap((v) => (v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string" ? [(v as { id: string }).id] : []));
}

/** Whether a call may go on, and what it must do first (a four-eyes check). */
interface Gate {
  refused?: ConnectError;
  approval?: (message: unknown) => Promise<ApprovalNeed | undefined>;
  /** The merchant the answer must be about (a merchant user's or a merchant key's call). */
  merchantId?: string;
}

/**
 * The services' own check of every call: who the caller is (its workload identity, verified; a
 * person's assertion it carries, verified), whether the RPC's table admits that caller, the
 * request pinned to the merchant a merchant's user or API key belongs to, four-eyes, and the
 * audit. A call without a workload identity is UNAUTHENTICATED; one the table does not admit is
 * PERMISSION_DENIED; either runs nothing. Health and reflection (no table) pass.
 */
export function accessInterceptor(options: AccessInterceptorOptions): Interceptor {
  const { registry, workloads, publicKey, clock, logger } = options;
  return (next) => async (req) => {
    const entry = registry.entryOf(req.service, req.method);
    if (!entry) return next(req);
    const { module, access } = entry;
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const run = approvedRunScope.getStore();
    const approved = run && run.module === module.name && run.rpc === rpc ? run : undefined;
    const message = req.stream ? undefined : req.message;
    const audit = auditor(entry, req, rpc, message, options);

    // 1. Which program calls. An approved request runs as the approver's, in this process.
    let workload: WorkloadIdentity;
    if (approved) workload = approved.workload;
    else {
      const header = req.header.get(WORKLOAD_HEADER);
      try {
        if (!header) throw new WorkloadIdentityError(`${req.method.name} needs the caller's workload identity (${WORKLOAD_HEADER})`);
        workload = await workloads.verify(header, module.name);
      } catch (err) {
        if (!(err instanceof WorkloadIdentityError)) throw err;
        await audit.refused({ actor: "", outcome: "UNAUTHENTICATED" });
        throw unauthenticated(err.message);
      }
    }

    // 2. A workload's own call, or the gateway's for a merchant: no person.
    const token = req.header.get(OPERATOR_ASSERTION_HEADER);
    if (!token) {
      if (workload.merchant) return merchantKeyCall(entry, req, message, workload, workload.merchant, audit, next);
      if (!isWorkload(workload, access.workloads)) {
        // A workload that carries people, calling a person's RPC with nobody: the person's credential is what is missing.
        if ((access.role && isWorkload(workload, OPERATOR_CARRIERS)) || (access.merchant && isWorkload(workload, MERCHANT_USER_CARRIERS))) {
          await audit.refused({ actor: "", workload: workload.id, outcome: "UNAUTHENTICATED" });
          throw unauthenticated(`${req.method.name} is an operator's action: it needs a signed operator assertion (${OPERATOR_ASSERTION_HEADER})`);
        }
        await audit.refused({ actor: "", workload: workload.id, outcome: "PERMISSION_DENIED" });
        throw denied(`${req.method.name} is not open to ${workload.id}`);
      }
      const scope: CallScope = { workload };
      if (access.audit !== "always") {
        // The hot path: a workload's own call (a bank report, the deposit service reading a merchant) carries nothing more.
        return runHandler(scope, next, req);
      }
      return audited(audit, { actor: "", workload: workload.id }, () => runHandler(scope, next, req));
    }

    // 3. A person, carried by a workload that carries people of their kind.
    let actor: ActorIdentity;
    try {
      if (!publicKey) throw new AssertionError("this service has no OPERATOR_ASSERTION_PUBLIC_KEY: it accepts no person's assertion");
      actor = await verifyAssertion(publicKey, token, module.name, clock.now());
    } catch (err) {
      if (!(err instanceof AssertionError)) throw err;
      await audit.refused({ actor: "", workload: workload.id, outcome: "UNAUTHENTICATED" });
      throw unauthenticated(err.message);
    }
    const who = { actor: actor.subject, actorKind: actor.kind, role: actor.role, workload: workload.id, ...(isMerchantUser(actor) ? { merchantId: actor.merchantId } : {}) };
    const carriers = access.people ?? (isMerchantUser(actor) ? MERCHANT_USER_CARRIERS : OPERATOR_CARRIERS);
    const carried = isWorkload(workload, carriers) && isWorkload(workload, isMerchantUser(actor) ? MERCHANT_USER_CARRIERS : OPERATOR_CARRIERS);
    const extra = approved ? { approvalId: approved.approvalId, maker: approved.maker } : {};
    const gate: Gate = !carried
      ? { refused: denied(`${workload.id} does not carry ${isMerchantUser(actor) ? "a merchant user's" : "an operator's"} call to ${req.method.name}`) }
      : isMerchantUser(actor)
        ? await merchantGate(access, req.method, message, actor)
        : operatorGate(access, req.method, message, actor);
    if (gate.refused) {
      await audit.refused({ ...who, outcome: gate.refused.metadata.get(ERROR_REASON_KEY) ?? "PERMISSION_DENIED" });
      throw gate.refused;
    }
    let before: unknown;
    let approvalId: string | undefined;
    try {
      if (gate.approval && !approved && message !== undefined) {
        await access.validate?.(message);
        const need = await gate.approval(message);
        if (need) {
          approvalId = await requestApproval(module.db, clock, {
            service: module.name,
            rpc,
            method: req.method,
            message,
            summary: need.summary,
            reason: access.reason?.(message) ?? "",
            targets: targetsOf(access, message).filter((t): t is string => typeof t === "string" && t !== ""),
            maker: actor,
          });
          const by = isMerchantUser(actor) ? "a second user of the merchant" : "a second operator";
          throw serviceError(Code.FailedPrecondition, "APPROVAL_REQUIRED", `${by} must approve this: approval ${approvalId} (${need.summary})`, {
            details: { approvalId },
          });
        }
      }
      if (access.before && message !== undefined) before = await access.before(message).catch(() => undefined);
      const scope: CallScope = { workload, operator: actor, ...(approved ? { approved } : {}) };
      const res = await runHandler(scope, next, req);
      const after = res.stream ? undefined : res.message;
      if (gate.merchantId !== undefined && after !== undefined && namesAnotherMerchant(after, gate.merchantId)) {
        // The scoping above is the rule; this is the net under it: an answer about another merchant's thing never leaves.
        logger.error({ rpc, merchantId: gate.merchantId }, "a merchant user's call answered with another merchant's data: withheld");
        throw notFound();
      }
      await audit.done({ ...who, ...extra, outcome: "ok", before }, after);
      return res;
    } catch (err) {
      // Refused by a rule (its lookup failed), waiting for approval, or failed: audited all the same.
      await audit.done({ ...who, ...extra, ...(approvalId ? { approvalId } : {}), outcome: reasonOf(err), before });
      throw err;
    }
  };
}

/**
 * Runs the handler as `scope`: no approved run of an outer call, and no merchant voice of an
 * outer request (the all-in-one's gateway calls in process), leaks into the calls it makes.
 */
function runHandler<R>(scope: CallScope, next: (req: UnaryRequest | StreamRequest) => Promise<R>, req: UnaryRequest | StreamRequest): Promise<R> {
  return callScope.run(scope, () => {
    const inner = () => speakForNoMerchant(() => next(req));
    return approvedRunScope.getStore() === undefined ? inner() : approvedRunScope.run(undefined, inner);
  });
}

/** Outcomes of a read that found nothing to read. */
const NOTHING_READ = new Set(["NOT_FOUND", "MERCHANT_NOT_FOUND", "API_KEY_NOT_FOUND", "VALIDATION_ERROR", "InvalidArgument", "NotFound"]);

type AuditPart = Omit<AuditEntry, "service" | "rpc" | "targets" | "reason" | "request">;

interface Auditor {
  /** A refused call: recorded when the RPC changes anything (or is always audited). */
  refused(part: AuditPart): Promise<void>;
  /** A call that ran (or failed running): the same rule. */
  done(part: AuditPart, answer?: unknown): Promise<void>;
}

function auditor(entry: AccessEntry, req: UnaryRequest | StreamRequest, rpc: string, message: unknown, options: AccessInterceptorOptions): Auditor {
  const { module, access } = entry;
  const mutating = isMutating(req.method);
  // A read audited always (a secret read): recorded when it read one, or was refused; a lookup that found nothing read nothing.
  const recorded = (part: AuditPart) => mutating || (access.audit === "always" && !NOTHING_READ.has(part.outcome));
  const write = (part: AuditPart, made: unknown = undefined): Promise<void> =>
    recorded(part)
      ? recordAudit(module.db, options.clock, options.logger, {
          service: module.name,
          rpc,
          targets: [...(message !== undefined ? targetsOf(access, message) : []), ...madeIds(made)],
          reason: message !== undefined ? (access.reason?.(message) ?? "") : "",
          request: message !== undefined ? { schema: req.method.input, message } : undefined,
          ...(made !== undefined ? { after: { schema: req.method.output, message: made } } : {}),
          ...part,
        })
      : Promise.resolve();
  return { refused: (part) => write(part), done: (part, answer) => write(part, answer) };
}

/** Runs `call`, recording its outcome (a workload's own call to an RPC audited always). */
async function audited<T extends { stream: boolean; message?: unknown }>(audit: Auditor, who: Omit<AuditPart, "outcome">, call: () => Promise<T>): Promise<T> {
  try {
    const res = await call();
    await audit.done({ ...who, outcome: "ok" }, res.stream ? undefined : res.message);
    return res;
  } catch (err) {
    await audit.done({ ...who, outcome: reasonOf(err) });
    throw err;
  }
}

/**
 * The gateway speaking for a merchant: the RPC must admit API keys with one of the key's scopes,
 * and the request is pinned to the merchant the gateway verified (another merchant's id:
 * NOT_FOUND), exactly as a merchant user's call is.
 */
async function merchantKeyCall(
  entry: AccessEntry,
  req: UnaryRequest | StreamRequest,
  message: unknown,
  workload: WorkloadIdentity,
  voice: MerchantVoice,
  audit: Auditor,
  next: (req: UnaryRequest | StreamRequest) => Promise<Awaited<ReturnType<Parameters<Interceptor>[0]>>>,
): ReturnType<ReturnType<Interceptor>> {
  const { access } = entry;
  const who = { actor: `api-key:${voice.keyId}`, actorKind: "api_key", role: "", workload: workload.id, merchantId: voice.merchantId };
  const rule = access.apiKey;
  let refused: ConnectError | undefined;
  if (!rule || message === undefined) refused = denied(`${req.method.name} is not open to a merchant's API key`);
  else if (!voice.scopes.some((s) => rule.scopes.includes(s))) refused = denied(`${req.method.name} needs an API key with the ${rule.scopes.join(" or ")} scope`);
  else if (!(rule.scope ? await rule.scope(message, voice.merchantId) : pinToMerchant(message, voice.merchantId))) refused = notFound();
  if (refused) {
    await audit.refused({ ...who, outcome: refused.metadata.get(ERROR_REASON_KEY) ?? "PERMISSION_DENIED" });
    throw refused;
  }
  const scope: CallScope = { workload };
  const res = await runHandler(scope, next, req);
  if (!res.stream && namesAnotherMerchant(res.message, voice.merchantId)) throw notFound();
  return res;
}

function operatorGate(access: RpcAccess, method: DescMethod, message: unknown, operator: OperatorIdentity): Gate {
  const needed = neededRole(access, message);
  if (!needed) return { refused: denied(`${method.name} is not an operator's action`) };
  if (!roleAtLeast(operator.role, needed)) return { refused: denied(`${method.name} needs the ${needed} role`) };
  const rule = access.approval;
  return rule ? { approval: (m) => rule(m, operator) } : {};
}

/**
 * A merchant user's call: the RPC must admit the user's role, and the request is pinned to the
 * user's merchant before anything runs (another merchant's id: NOT_FOUND).
 */
async function merchantGate(access: RpcAccess, method: DescMethod, message: unknown, user: MerchantUserIdentity): Promise<Gate> {
  const rule = access.merchant;
  if (!rule || message === undefined) return { refused: denied(`${method.name} is not open to a merchant's users`) };
  if (!merchantRolesFor(access, message).includes(user.role)) return { refused: denied(`${method.name} is not open to the ${user.role} role`) };
  const mine = rule.scope ? await rule.scope(message, user.merchantId) : pinToMerchant(message, user.merchantId);
  if (!mine) return { refused: notFound() };
  const approval = rule.approval;
  return { merchantId: user.merchantId, ...(approval ? { approval: (m: unknown) => approval(m, user) } : {}) };
}

export type { ApprovedRun };
