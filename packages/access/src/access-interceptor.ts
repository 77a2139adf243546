import type { KeyObject } from "node:crypto";
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type UnaryRequest, type StreamRequest } from "@connectrpc/connect";
import { ERROR_REASON_KEY, serviceError, withCommitParticipant, withoutCommitParticipant, type Clock, type Logger } from "@payments/kit";
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
import { requestApproval, type ApprovalAsked } from "./approvals.js";
import { speakForNoMerchant } from "./outgoing-identity.js";
import { AssertionError, isMerchantUser, OPERATOR_ASSERTION_HEADER, roleAtLeast, verifyAssertionWithId, type ActorIdentity, type MerchantUserIdentity, type OperatorIdentity } from "./operator-assertion.js";
import { answerJson, appendAudit, assertionUsed, isReplayedAssertion, madeIds, recordAnswer, recordAuditAlone, withoutJti, type AuditEntry } from "./operator-audit.js";
import { assertionReplayed, CallAudit } from "./audit-participant.js";
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
  // No audit row of an outer call (an audited handler calling another module in process) rides
  // with this call's changes: each call's row is its own (audit.run).
  return (next) => (req) => withoutCommitParticipant(() => check(next, req));

  async function check(next: Parameters<Interceptor>[0], req: UnaryRequest | StreamRequest): ReturnType<ReturnType<Interceptor>> {
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
      return audit.run({ actor: "", workload: workload.id }, () => runHandler(scope, next, req));
    }

    // 3. A person, carried by a workload that carries people of their kind.
    let actor: ActorIdentity;
    let jti: string | undefined;
    try {
      if (!publicKey) throw new AssertionError("this service has no OPERATOR_ASSERTION_PUBLIC_KEY: it accepts no person's assertion");
      ({ actor, jti } = await verifyAssertionWithId(publicKey, token, module.name, clock.now()));
      // An approved request runs with its approver's assertion, spent on the Approve step (which recorded it).
      if (approved || !isMutating(req.method)) jti = undefined;
      else if (!jti) throw new AssertionError("the operator assertion has no id (jti): a call that changes anything needs one, used once");
    } catch (err) {
      if (!(err instanceof AssertionError)) throw err;
      await audit.refused({ actor: "", workload: workload.id, outcome: "UNAUTHENTICATED" });
      throw unauthenticated(err.message);
    }
    const who = { actor: actor.subject, actorKind: actor.kind, role: actor.role, workload: workload.id, ...(isMerchantUser(actor) ? { merchantId: actor.merchantId } : {}) };
    // A mutating call's assertion is accepted once: a second use is refused before anything runs
    // (and, racing the first, by the audit's unique jti when its change commits).
    if (jti && (await assertionUsed(module.db, jti))) {
      await audit.refused({ ...who, outcome: "ASSERTION_REPLAYED" });
      throw assertionReplayed();
    }
    const spent = jti ? { jti } : {};
    const carriers = access.people ?? (isMerchantUser(actor) ? MERCHANT_USER_CARRIERS : OPERATOR_CARRIERS);
    const carried = isWorkload(workload, carriers) && isWorkload(workload, isMerchantUser(actor) ? MERCHANT_USER_CARRIERS : OPERATOR_CARRIERS);
    const extra = approved ? { approvalId: approved.approvalId, maker: approved.maker } : {};
    const gate: Gate = !carried
      ? { refused: denied(`${workload.id} does not carry ${isMerchantUser(actor) ? "a merchant user's" : "an operator's"} call to ${req.method.name}`) }
      : isMerchantUser(actor)
        ? await merchantGate(access, req.method, message, actor)
        : operatorGate(access, req.method, message, actor);
    if (gate.refused) {
      await audit.refused({ ...who, ...spent, outcome: gate.refused.metadata.get(ERROR_REASON_KEY) ?? "PERMISSION_DENIED" });
      throw gate.refused;
    }
    if (gate.approval && !approved && message !== undefined) {
      let need: ApprovalNeed | undefined;
      try {
        await access.validate?.(message);
        need = await gate.approval(message);
      } catch (err) {
        // Refused by a rule (its lookup failed) or invalid: audited all the same.
        await audit.refused({ ...who, ...spent, outcome: reasonOf(err) });
        throw err;
      }
      if (need) await askApproval(entry, req, rpc, message, actor, need, audit, { ...who, ...spent }, options);
    }
    const before = access.before && message !== undefined ? await access.before(message).catch(() => undefined) : undefined;
    const scope: CallScope = { workload, operator: actor, ...(approved ? { approved } : {}) };
    return audit.run({ ...who, ...extra, ...spent, before }, async () => {
      const res = await runHandler(scope, next, req);
      const after = res.stream ? undefined : res.message;
      if (gate.merchantId !== undefined && after !== undefined && namesAnotherMerchant(after, gate.merchantId)) {
        // The scoping above is the rule; this is the net under it: an answer about another merchant's thing never leaves.
        logger.error({ rpc, merchantId: gate.merchantId }, "a merchant user's call answered with another merchant's data: withheld");
        throw notFound();
      }
      return res;
    });
  }
}

/**
 * Stores the request for a second person's approval, its audit row (APPROVAL_REQUIRED, with the
 * maker's assertion spent) in the same transaction, and refuses the call with the approval's id.
 * The same request already waiting (anyone's: sameRequestKey) gets that approval back, audited again, and names its maker.
 */
async function askApproval(
  entry: AccessEntry,
  req: UnaryRequest | StreamRequest,
  rpc: string,
  message: unknown,
  actor: ActorIdentity,
  need: ApprovalNeed,
  audit: Auditor,
  who: Omit<AuditPart, "outcome">,
  options: AccessInterceptorOptions,
): Promise<never> {
  const { module, access } = entry;
  const outcome = "APPROVAL_REQUIRED";
  let asked: ApprovalAsked;
  try {
    asked = await requestApproval(
      module.db,
      options.clock,
      {
        service: module.name,
        rpc,
        method: req.method,
        message,
        summary: need.summary,
        reason: access.reason?.(message) ?? "",
        targets: targetsOf(access, message).filter((t): t is string => typeof t === "string" && t !== ""),
        maker: actor,
      },
      (trx, approvalId) => appendAudit(trx, options.clock, audit.entryOf({ ...who, approvalId, outcome })),
    );
  } catch (err) {
    if (!isReplayedAssertion(err)) {
      await audit.refused({ ...who, outcome: reasonOf(err) });
      throw err;
    }
    // A racing call spent the assertion first: nothing was stored.
    await audit.refused({ ...withoutJti(who), outcome: "ASSERTION_REPLAYED" });
    throw assertionReplayed();
  }
  if (!asked.created) await audit.refused({ ...who, approvalId: asked.id, outcome });
  const by = isMerchantUser(actor) ? "a second user of the merchant" : "a second operator";
  if (asked.created) throw serviceError(Code.FailedPrecondition, outcome, `${by} must approve this: approval ${asked.id} (${need.summary})`, { details: { approvalId: asked.id } });
  // The same request waits already (sameRequestKey): this ask is that approval, and says whose it is.
  const whose = asked.maker === actor.subject ? "you asked for it" : `${asked.maker} asked for it`;
  throw serviceError(Code.FailedPrecondition, outcome, `this already waits for approval ${asked.id} (${whose} at ${new Date(asked.createdAt).toISOString()}): ${by} must approve it (${need.summary})`, {
    details: { approvalId: asked.id, alreadyWaiting: "true", maker: asked.maker },
  });
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
  /** The row `part` makes of this call (request, targets and reason added; `made`: what it answered, whose ids are targets too). */
  entryOf(part: AuditPart, made?: unknown): AuditEntry;
  /** A call refused (or failed) with nothing changed: recorded now, in a transaction of its own, when the RPC is audited. */
  refused(part: AuditPart): Promise<void>;
  /**
   * Runs `call`, recorded when the RPC is audited: its row in the transaction that commits its
   * change (CallAudit) and its answer beside it, or, when no transaction committed one, the row
   * with its outcome and answer once it ended. A second use of its assertion, found when its
   * change would commit, is answered ASSERTION_REPLAYED, with the change rolled back.
   */
  run<T extends { stream: boolean; message?: unknown }>(part: Omit<AuditPart, "outcome">, call: () => Promise<T>): Promise<T>;
}

function auditor(entry: AccessEntry, req: UnaryRequest | StreamRequest, rpc: string, message: unknown, options: AccessInterceptorOptions): Auditor {
  const { module, access } = entry;
  const { clock, logger } = options;
  const mutating = isMutating(req.method);
  const audited = mutating || access.audit === "always";
  // A read audited always (a secret read): recorded when it read one, or was refused; a lookup that found nothing read nothing.
  const recorded = (outcome: string) => mutating || (access.audit === "always" && !NOTHING_READ.has(outcome));
  const entryOf = (part: AuditPart, made: unknown = undefined): AuditEntry => ({
    service: module.name,
    rpc,
    targets: [...(message !== undefined ? targetsOf(access, message) : []), ...madeIds(made)],
    reason: message !== undefined ? (access.reason?.(message) ?? "") : "",
    request: message !== undefined ? { schema: req.method.input, message } : undefined,
    ...(made !== undefined ? { after: { schema: req.method.output, message: made } } : {}),
    ...part,
  });
  const alone = (part: AuditPart, made?: unknown) => recordAuditAlone(module.db, clock, logger, entryOf(part, made));
  return {
    entryOf,
    async refused(part) {
      if (!recorded(part.outcome)) return;
      // The assertion was spent by a racing call after the check: the refusal is recorded as the replay it is.
      if ((await alone(part)).replayed) throw assertionReplayed();
    },
    async run<T extends { stream: boolean; message?: unknown }>(part: Omit<AuditPart, "outcome">, call: () => Promise<T>): Promise<T> {
      if (!audited) return call();
      const row = new CallAudit(module.db, clock, () => entryOf({ ...part, outcome: "ok" }));
      let res: T | undefined;
      let failed = false;
      let error: unknown;
      try {
        res = await withCommitParticipant(row, call);
      } catch (err) {
        failed = true;
        error = err;
      }
      const committed = row.close();
      if (row.replayed) [failed, error] = [true, assertionReplayed()];
      const outcome = failed ? reasonOf(error) : "ok";
      const made = res && !res.stream ? res.message : undefined;
      if (committed) {
        const known = new Set(message !== undefined ? targetsOf(access, message) : []);
        const madeTargets = madeIds(made).filter((id) => !known.has(id));
        await recordAnswer(module.db, clock, logger, committed, outcome, answerJson(made !== undefined ? { schema: req.method.output, message: made } : undefined), madeTargets);
      } else if (recorded(outcome)) {
        // A replayed assertion's refusal is recorded without the jti its first use holds.
        const written = await alone({ ...(row.replayed ? withoutJti(part) : part), outcome }, made);
        if (written.replayed) [failed, error] = [true, assertionReplayed()];
      }
      if (failed) throw error;
      return res as T;
    },
  };
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
