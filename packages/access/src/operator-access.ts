import { AsyncLocalStorage } from "node:async_hooks";
import type { KeyObject } from "node:crypto";
import type { DescMessage, DescMethod, DescService, MessageShape } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Knex } from "knex";
import { type Clock, ERROR_REASON_KEY, type Logger, serviceError } from "@payments/kit";
import {
  AssertionError,
  audienceOfService,
  isMerchantUser,
  OPERATOR_ASSERTION_HEADER,
  roleAtLeast,
  verifyAssertion,
  type AssertionSigner,
  type ActorIdentity,
  type MerchantRole,
  type MerchantUserIdentity,
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
  /**
   * Whether a merchant's own user (the merchant dashboard) may call it, and as which roles.
   * Without it, any merchant user's call is PERMISSION_DENIED. With it, the call is scoped to the
   * user's merchant before the handler runs: see MerchantRpcAccess.
   */
  merchant?: MerchantRpcAccess<Req>;
}

/**
 * A merchant user's access to one RPC. The service scopes the call itself: by default the
 * request's `merchantId` is set to the user's merchant (another merchant's id is NOT_FOUND, as
 * if it did not exist) and `allMerchants` is cleared, so the handler's own lookups by merchant
 * find nothing of another merchant's. A request without a `merchantId` field needs `scope`.
 */
export interface MerchantRpcAccess<Req = unknown> {
  /** The merchant roles that may call it. */
  roles: readonly MerchantRole[];
  /** When the request decides it: the roles this request admits (a subset of `roles`). */
  rolesFor?: (req: Req) => readonly MerchantRole[];
  /**
   * For a request that names no merchant: whether what it is about belongs to `merchantId`
   * (false: NOT_FOUND, nothing runs). May set fields of the request to pin it to the merchant.
   */
  scope?: (req: Req, merchantId: string) => Promise<boolean> | boolean;
  /** The merchant's own four-eyes: whether a second user of the same merchant must approve this request. */
  approval?: (req: Req, user: MerchantUserIdentity) => Promise<ApprovalNeed | undefined>;
}

/** Every merchant role: reads a merchant's viewer may make. */
export const ANY_MERCHANT_ROLE: readonly MerchantRole[] = ["owner", "developer", "finance", "viewer"];

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
    if (access.merchant && !access.merchant.scope && !method.input.fields.some((f) => f.localName === "merchantId")) {
      // Refused at start, not at the first call: a merchant rule that could not be scoped would be an open door.
      throw new Error(`${service.typeName}/${method.name} admits merchant users but its request names no merchant: give it a scope`);
    }
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
  /** The same entries by the method's descriptor: the router hands the interceptor these very objects, so the hot path builds no key. */
  private readonly byMethod = new Map<DescMethod, AccessEntry>();
  readonly modules: AccessModule[] = [];

  add(module: AccessModule, tables: readonly ServiceAccess[]): void {
    this.modules.push(module);
    for (const table of tables) {
      for (const [name, { method, access }] of table.rules) {
        const entry = { module, service: table.service, method, access };
        this.entries.set(`${table.service.typeName}/${name}`, entry);
        this.byMethod.set(method, entry);
      }
    }
  }

  lookup(typeName: string, method: string): AccessEntry | undefined {
    return this.entries.get(`${typeName}/${method}`);
  }

  /** The entry of a call's method: by its descriptor, else by name (a descriptor built elsewhere). */
  entryOf(service: DescService, method: DescMethod): AccessEntry | undefined {
    return this.byMethod.get(method) ?? this.entries.get(`${service.typeName}/${method.name}`);
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
  makerRole: string;
}

/** Who the call in progress acts for, when an operator's assertion came with it. */
export interface OperatorScope {
  operator: ActorIdentity;
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
    const entry = registry.entryOf(req.service, req.method);
    if (!entry) return next(req);
    const { module, access } = entry;
    const token = req.header.get(OPERATOR_ASSERTION_HEADER);
    if (!token && access.system) {
      // A trusted internal caller (the gateway's every call): nothing to check or carry. The hot
      // path skips the scopes unless an outer call set one that must not leak into this one.
      if (scope.getStore() === undefined && approvedRunScope.getStore() === undefined) return next(req);
      return scope.run(undefined, () => approvedRunScope.run(undefined, () => next(req)));
    }

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

    if (!token) {
      await audit({ actor: "", outcome: "UNAUTHENTICATED" });
      throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", `${req.method.name} is an operator's action: it needs a signed operator assertion (${OPERATOR_ASSERTION_HEADER})`);
    }
    let actor: ActorIdentity;
    try {
      if (!publicKey) throw new AssertionError("this service has no OPERATOR_ASSERTION_PUBLIC_KEY: it accepts no operator's assertion");
      actor = await verifyAssertion(publicKey, token, module.name, clock.now());
    } catch (err) {
      if (!(err instanceof AssertionError)) throw err;
      await audit({ actor: "", outcome: "UNAUTHENTICATED" });
      throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", err.message);
    }

    const who = { actor: actor.subject, actorKind: actor.kind, role: actor.role, ...(isMerchantUser(actor) ? { merchantId: actor.merchantId } : {}) };
    const run = approvedRunScope.getStore();
    const approved = run && run.module === module.name && run.rpc === rpc ? run : undefined;
    const extra = approved ? { approvalId: approved.approvalId, maker: approved.maker } : {};
    const gate = isMerchantUser(actor) ? await merchantGate(access, req.method, message, actor) : operatorGate(access, req.method, message, actor);
    if (gate.refused) {
      await audit({ ...who, outcome: gate.refused.metadata.get(ERROR_REASON_KEY) ?? "PERMISSION_DENIED" });
      throw gate.refused;
    }
    let before: unknown;
    let approvalId: string | undefined;
    try {
      if (gate.approval && !approved && message !== undefined) {
        access.validate?.(message);
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
      const res = await scope.run({ operator: actor, ...(approved ? { approved } : {}) }, () => approvedRunScope.run(undefined, () => next(req)));
      const after = res.stream ? undefined : res.message;
      if (isMerchantUser(actor) && after !== undefined && namesAnotherMerchant(after, actor.merchantId)) {
        // The scoping above is the rule; this is the net under it: an answer about another merchant's thing never leaves.
        logger.error({ rpc, merchantId: actor.merchantId }, "a merchant user's call answered with another merchant's data: withheld");
        throw notFound();
      }
      await audit({ ...who, ...extra, outcome: "ok", before, ...(after ? { after: { schema: req.method.output, message: after } } : {}) }, after);
      return res;
    } catch (err) {
      // Refused by a rule (its lookup failed), waiting for approval, or failed: audited all the same.
      await audit({ ...who, ...extra, ...(approvalId ? { approvalId } : {}), outcome: reasonOf(err), before });
      throw err;
    }
  };
}

interface Gate {
  refused?: ConnectError;
  approval?: (message: unknown) => Promise<ApprovalNeed | undefined>;
}

function operatorGate(access: RpcAccess, method: DescMethod, message: unknown, operator: OperatorIdentity): Gate {
  const needed = neededRole(access, message);
  if (!roleAtLeast(operator.role, needed)) return { refused: serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${method.name} needs the ${needed} role`) };
  const rule = access.approval;
  return rule ? { approval: (m) => rule(m, operator) } : {};
}

/** What another merchant's thing answers a merchant user: the same as a thing that does not exist. */
function notFound(): ConnectError {
  return serviceError(Code.NotFound, "NOT_FOUND", "not found");
}

/** The merchant roles a request admits, when the RPC admits merchant users at all. */
export function merchantRolesFor(access: RpcAccess, message: unknown): readonly MerchantRole[] {
  const rule = access.merchant;
  if (!rule) return [];
  if (!rule.rolesFor || message === undefined) return rule.roles;
  const narrowed = rule.rolesFor(message);
  return rule.roles.filter((r) => narrowed.includes(r));
}

/**
 * A merchant user's call: the RPC must admit the user's role, and the request is pinned to the
 * user's merchant before anything runs (another merchant's id: NOT_FOUND).
 */
async function merchantGate(access: RpcAccess, method: DescMethod, message: unknown, user: MerchantUserIdentity): Promise<Gate> {
  const rule = access.merchant;
  if (!rule || message === undefined) return { refused: serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${method.name} is not open to a merchant's users`) };
  if (!merchantRolesFor(access, message).includes(user.role)) {
    return { refused: serviceError(Code.PermissionDenied, "PERMISSION_DENIED", `${method.name} is not open to the ${user.role} role`) };
  }
  const mine = rule.scope ? await rule.scope(message, user.merchantId) : pinToMerchant(message, user.merchantId);
  if (!mine) return { refused: notFound() };
  const approval = rule.approval;
  return approval ? { approval: (m) => approval(m, user) } : {};
}

/** Sets the request's merchantId to the user's merchant (false when it named another) and clears allMerchants. */
export function pinToMerchant(message: unknown, merchantId: string): boolean {
  const fields = message as { merchantId?: unknown; allMerchants?: unknown };
  if (typeof fields.merchantId !== "string") return false;
  if (fields.merchantId !== "" && fields.merchantId !== merchantId) return false;
  fields.merchantId = merchantId;
  if (typeof fields.allMerchants === "boolean") fields.allMerchants = false;
  return true;
}

/** Whether an answer carries a merchantId other than `merchantId`, at its top or one level down (a list's items, `{ deposit }`). */
export function namesAnotherMerchant(answer: unknown, merchantId: string): boolean {
  const other = (value: unknown): boolean => {
    if (!value || typeof value !== "object") return false;
    const id = (value as { merchantId?: unknown }).merchantId;
    return typeof id === "string" && id !== "" && id !== merchantId;
  };
  if (other(answer)) return true;
  if (!answer || typeof answer !== "object") return false;
  for (const value of Object.values(answer)) {
    if (Array.isArray(value) ? value.some(other) : other(value)) return true;
  }
  return false;
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
