import { AsyncLocalStorage } from "node:async_hooks";
import type { KeyObject } from "node:crypto";
import type { DescMessage, DescMethod, DescService, MessageShape } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Knex } from "knex";
import type { Clock } from "./clock.js";
import { ERROR_REASON_KEY, serviceError } from "./errors.js";
import type { Logger } from "./logger.js";
import {
  AssertionError,
  audienceOfService,
  OPERATOR_ASSERTION_HEADER,
  roleAtLeast,
  verifyAssertion,
  type AssertionSigner,
  type OperatorIdentity,
  type OperatorRole,
} from "./operator-assertion.js";
import { recordAudit, type AuditEntry } from "./operator-audit.js";
import { requestApproval } from "./approvals.js";

/** The header that picks one of the services a process hosts, for the services every service serves (audit, approvals). */
export const OPERATOR_SERVICE_HEADER = "x-payments-service";
/** Response metadata of APPROVAL_REQUIRED: the id of the approval that waits for a second operator. */
export const APPROVAL_ID_KEY = "x-approval-id";

/** What a second operator must approve: one line on what the request does. */
export interface ApprovalNeed {
  summary: string;
}

/**
 * Who may call one RPC, and what the audit records of it. Checked by the service itself on
 * every call (operatorAccessInterceptor), whoever the caller: the console, the CLI, a script.
 */
export interface RpcAccess<Req = unknown> {
  /** The least role that may call it with an operator's assertion. */
  role: OperatorRole;
  /** When the request decides it (a transfer's return needs finance, its match an operator): the role this request needs, at least `role`. */
  roleFor?: (req: Req) => OperatorRole;
  /**
   * Trusted internal callers (the gateway acting for an authenticated merchant, another
   * service, a bank integration) may call it without an assertion, behind INTERNAL_API_TOKEN.
   * Without it, a call without a valid assertion is UNAUTHENTICATED.
   */
  system?: boolean;
  /** The ids the call is about, for the audit's search; by default every top-level `id` and `…Id` field of the request (transactionId, merchantId…). */
  targets?: (req: Req) => Array<string | undefined>;
  /** The reason the operator gave, for the audit. */
  reason?: (req: Req) => string | undefined;
  /**
   * The handler's own check of the request (its parse), run before `approval`: a request that
   * would be refused as invalid is refused now, not stored for a second operator to approve.
   */
  validate?: (req: Req) => unknown;
  /** Whether a second operator must approve this request: the need, or undefined when one suffices. */
  approval?: (req: Req, operator: OperatorIdentity) => Promise<ApprovalNeed | undefined>;
  /** The thing the call changes, read before it runs, for the audit's before. */
  before?: (req: Req) => Promise<unknown>;
}

type MethodsOf<S extends DescService> = S extends { method: infer M } ? M : never;
type InputOf<M> = M extends { input: infer I extends DescMessage } ? MessageShape<I> : never;

/** One permission entry per RPC of a service, by its local (camelCase) name: the type makes a missing one a compile error. */
export type AccessRules<S extends DescService> = { [K in keyof MethodsOf<S>]: RpcAccess<InputOf<MethodsOf<S>[K]>> };

/** A service's permission table, ready for the registry. */
export interface ServiceAccess {
  service: DescService;
  /** By the method's proto name (`ConfirmDeposit`). */
  rules: ReadonlyMap<string, { method: DescMethod; access: RpcAccess }>;
}

export function defineAccess<S extends DescService>(service: S, rules: AccessRules<S>): ServiceAccess {
  const byName = new Map<string, { method: DescMethod; access: RpcAccess }>();
  for (const method of service.methods) {
    const access = (rules as Record<string, RpcAccess | undefined>)[method.localName];
    if (!access) throw new Error(`${service.typeName}/${method.name} has no access rule`);
    byName.set(method.name, { method, access });
  }
  return { service, rules: byName };
}

/** A module's tables the access layer writes to: its audit and its approvals. */
export interface AccessModule {
  name: string;
  db: Knex;
}

export interface AccessEntry {
  module: AccessModule;
  service: DescService;
  method: DescMethod;
  access: RpcAccess;
}

/** Every RPC of the services one process hosts, with the module that owns it. */
export class AccessRegistry {
  private readonly entries = new Map<string, AccessEntry>();
  readonly modules: AccessModule[] = [];

  add(module: AccessModule, tables: readonly ServiceAccess[]): void {
    this.modules.push(module);
    for (const table of tables) {
      for (const [name, { method, access }] of table.rules) this.entries.set(`${table.service.typeName}/${name}`, { module, service: table.service, method, access });
    }
  }

  lookup(typeName: string, method: string): AccessEntry | undefined {
    return this.entries.get(`${typeName}/${method}`);
  }

  module(name: string): AccessModule | undefined {
    return this.modules.find((m) => m.name === name);
  }
}

/** An approved request being run: the interceptor lets exactly this call past its approval. */
export interface ApprovedRun {
  approvalId: string;
  module: string;
  rpc: string;
  maker: string;
  makerRole: OperatorRole;
}

/** Who the call in progress acts for, when an operator's assertion came with it. */
export interface OperatorScope {
  operator: OperatorIdentity;
  /** Set when the call runs an approved request: the maker asked, `operator` approved. */
  approved?: ApprovedRun;
}

const scope = new AsyncLocalStorage<OperatorScope | undefined>();
const approvedRunScope = new AsyncLocalStorage<ApprovedRun | undefined>();

/** The operator the current call acts for; undefined for a trusted internal caller. */
export function currentOperator(): OperatorScope | undefined {
  return scope.getStore();
}

/**
 * The actor a service records for the current call: the verified subject of the operator's
 * assertion (for an approved request, maker and approver both), else `fallback` (what an
 * internal caller, such as a bank integration, says it is).
 */
export function actingName(fallback: string): string {
  const current = scope.getStore();
  if (!current) return fallback;
  if (current.approved) return `${current.approved.maker}, approved by ${current.operator.subject}`;
  return current.operator.subject;
}

/** Runs `fn` (a call to this process's own handlers) as the approved run of one approval. */
export function runApproved<T>(run: ApprovedRun, fn: () => Promise<T>): Promise<T> {
  return approvedRunScope.run(run, fn);
}

export interface OperatorAccessOptions {
  registry: AccessRegistry;
  /** OPERATOR_ASSERTION_PUBLIC_KEY; without it every operator call is refused. */
  publicKey: KeyObject | undefined;
  clock: Clock;
  logger: Logger;
}

/** The ids a request is about: its rule's, or its `id` and `…Id` fields. */
export function targetsOf(access: RpcAccess, message: unknown): Array<string | undefined> {
  if (access.targets) return access.targets(message);
  if (!message || typeof message !== "object") return [];
  return Object.entries(message).filter(([k, v]) => (k === "id" || k.endsWith("Id")) && typeof v === "string" && v !== "").map(([, v]) => v as string);
}

/** The ids of what a call answered (`{ merchant: { id } }`): a thing it created is found in the audit by its new id. */
function madeIds(response: unknown): string[] {
  if (!response || typeof response !== "object") return [];
  return Object.values(response).flatMap((v) => (v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string" ? [(v as { id: string }).id] : []));
}

/** The role a request needs: its RPC's, or more when the request decides (roleFor). */
export function neededRole(access: RpcAccess, message: unknown): OperatorRole {
  if (!access.roleFor || message === undefined) return access.role;
  const more = access.roleFor(message);
  return roleAtLeast(more, access.role) ? more : access.role;
}

function reasonOf(err: unknown): string {
  if (err instanceof ConnectError) return err.metadata.get(ERROR_REASON_KEY) ?? (Code[err.code] || String(err.code));
  return "INTERNAL";
}

/**
 * The services' own check of who acts: verifies the operator assertion (audience = the module
 * that owns the RPC), checks the role against the RPC's rule, stores a pending approval
 * instead of running a request that needs a second operator, and records every operator
 * call to a mutating RPC, refused or done, in the owning module's audit. A call without an
 * assertion passes only to an RPC open to trusted internal callers.
 */
export function operatorAccessInterceptor(options: OperatorAccessOptions): Interceptor {
  const { registry, publicKey, clock, logger } = options;
  return (next) => async (req) => {
    const entry = registry.lookup(req.service.typeName, req.method.name);
    if (!entry) return next(req);
    const { module, access } = entry;
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const message = req.stream ? undefined : req.message;
    const mutates = isMutating(req.method);
    const audit = (part: Omit<AuditEntry, "service" | "rpc" | "targets" | "reason" | "request">, made: unknown = undefined): Promise<void> =>
      mutates
        ? recordAudit(module.db, clock, logger, {
            service: module.name,
            rpc,
            targets: [...(message !== undefined ? targetsOf(access, message) : []), ...madeIds(made)],
            reason: message !== undefined ? (access.reason?.(message) ?? "") : "",
            request: message !== undefined ? { schema: req.method.input, message } : undefined,
            ...part,
          })
        : Promise.resolve();

    const token = req.header.get(OPERATOR_ASSERTION_HEADER);
    let operator: OperatorIdentity | undefined;
    if (token) {
      try {
        if (!publicKey) throw new AssertionError("this service has no OPERATOR_ASSERTION_PUBLIC_KEY: it accepts no operator's assertion");
        operator = await verifyAssertion(publicKey, token, module.name, clock.now());
      } catch (err) {
        if (!(err instanceof AssertionError)) throw err;
        await audit({ actor: "", outcome: "UNAUTHENTICATED" });
        throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", err.message);
      }
    } else if (!access.system) {
      await audit({ actor: "", outcome: "UNAUTHENTICATED" });
      throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", `${req.method.name} is an operator's action: it needs a signed operator assertion (${OPERATOR_ASSERTION_HEADER})`);
    }
    if (!operator) {
      // A trusted internal caller: nothing to carry. The hot path (the gateway's calls) skips the
      // scopes unless an outer call set one that must not leak into this one.
      if (scope.getStore() === undefined && approvedRunScope.getStore() === undefined) return next(req);
      return scope.run(undefined, () => approvedRunScope.run(undefined, () => next(req)));
    }

    const who = { actor: operator.subject, actorKind: operator.kind, role: operator.role };
    const needed = neededRole(access, message);
    if (operator.merchantId !== undefined || !roleAtLeast(operator.role, needed)) {
      await audit({ ...who, outcome: "PERMISSION_DENIED" });
      throw serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${req.method.name} needs the ${needed} role`);
    }
    const run = approvedRunScope.getStore();
    const approved = run && run.module === module.name && run.rpc === rpc ? run : undefined;
    const extra = approved ? { approvalId: approved.approvalId, maker: approved.maker } : {};
    let before: unknown;
    let approvalId: string | undefined;
    try {
      if (access.approval && !approved && message !== undefined) {
        access.validate?.(message);
        const need = await access.approval(message, operator);
        if (need) {
          approvalId = await requestApproval(module.db, clock, {
            service: module.name,
            rpc,
            method: req.method,
            message,
            summary: need.summary,
            reason: access.reason?.(message) ?? "",
            targets: targetsOf(access, message).filter((t): t is string => typeof t === "string" && t !== ""),
            maker: operator,
          });
          throw serviceError(Code.FailedPrecondition, "APPROVAL_REQUIRED", `a second operator must approve this: approval ${approvalId} (${need.summary})`, {
            details: { approvalId },
          });
        }
      }
      if (access.before && message !== undefined) before = await access.before(message).catch(() => undefined);
      const res = await scope.run({ operator, ...(approved ? { approved } : {}) }, () => approvedRunScope.run(undefined, () => next(req)));
      const after = res.stream ? undefined : res.message;
      await audit({ ...who, ...extra, outcome: "ok", before, ...(after ? { after: { schema: req.method.output, message: after } } : {}) }, after);
      return res;
    } catch (err) {
      // Refused by a rule (its lookup failed), waiting for approval, or failed: audited all the same.
      await audit({ ...who, ...extra, ...(approvalId ? { approvalId } : {}), outcome: reasonOf(err), before });
      throw err;
    }
  };
}

/**
 * Whether an RPC changes anything, from its descriptor: every read is marked
 * `option idempotency_level = NO_SIDE_EFFECTS` in its proto, so a new RPC is a mutation (audited,
 * walked by the role tests) until its proto says otherwise.
 */
export function isMutating(method: DescMethod): boolean {
  return method.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS;
}

/** Refuses a call that names a service this process does not host, for the services every service serves. */
export function hostedModule(registry: AccessRegistry, header: Headers): AccessModule {
  const name = header.get(OPERATOR_SERVICE_HEADER);
  if (name) {
    const found = registry.module(name);
    if (!found) throw serviceError(Code.NotFound, "SERVICE_NOT_HOSTED", `this process does not host the ${name} service`);
    return found;
  }
  const only = registry.modules.length === 1 ? registry.modules[0] : undefined;
  if (!only) throw serviceError(Code.InvalidArgument, "VALIDATION_ERROR", `this process hosts several services: name one in ${OPERATOR_SERVICE_HEADER}`, { field: OPERATOR_SERVICE_HEADER });
  return only;
}

/**
 * The client side: every call carries the signer's assertion for the service it goes to
 * (audienceOfService). The services every service serves (audit, approvals) take their audience
 * from `service`, sent as x-payments-service too, so a process hosting several knows which.
 */
export function operatorAssertionInterceptor(signer: AssertionSigner, service?: string): Interceptor {
  return (next) => async (req) => {
    const audience = audienceOfService(req.service.typeName) ?? service;
    if (audience) {
      req.header.set(OPERATOR_ASSERTION_HEADER, await signer.assertionFor(audience));
      if (!audienceOfService(req.service.typeName)) req.header.set(OPERATOR_SERVICE_HEADER, audience);
    }
    return next(req);
  };
}
