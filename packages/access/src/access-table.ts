import type { DescMessage, DescMethod, DescService, MessageShape } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { serviceError, type AccessTable } from "@payments/kit";
import type { Knex } from "knex";
import { roleAtLeast, type MerchantRole, type MerchantUserIdentity, type OperatorIdentity, type OperatorRole } from "./operator-assertion.js";
import type { ApiKeyScope, WorkloadName } from "./workload-identity.js";

/** The header that picks one of the services a process hosts, for the services every service serves (audit, approvals). */
export const OPERATOR_SERVICE_HEADER = "x-payments-service";
/** Response metadata of APPROVAL_REQUIRED: the id of the approval that waits for a second person. */
export const APPROVAL_ID_KEY = "x-approval-id";

/** What a second person must approve: one line on what the request does. */
export interface ApprovalNeed {
  summary: string;
}

/**
 * Who may call one RPC, and what the audit records of it. Checked by the service itself on every
 * call (accessInterceptor), whoever the caller. Every caller names itself (a workload identity);
 * then exactly one of these admits it, or the call is refused with nothing run:
 * - `workloads`: a workload calling for itself (the callback-sender reading a merchant's
 *   callback target, a bank integration reporting a transfer);
 * - `apiKey`: the gateway speaking for a merchant, with the scopes of the merchant's API key;
 * - `role`: an operator, carried by a workload that carries people (the console, the CLI);
 * - `merchant`: a merchant's own user, carried by the console or the merchant dashboard.
 */
export interface RpcAccess<Req = unknown> {
  /** The least role of an operator who may call it. Absent: closed to operators. */
  role?: OperatorRole;
  /** When the request decides it (a transfer's return needs finance, its match an operator): the role this request needs, at least `role`. */
  roleFor?: (req: Req) => OperatorRole;
  /** Workloads that may call it for themselves, with no person or merchant behind the call. */
  workloads?: readonly WorkloadName[];
  /** Whether the gateway may call it for a merchant, with which API key scopes. */
  apiKey?: ApiKeyRpcAccess<Req>;
  /** Whether a merchant's own user (the merchant dashboard) may call it, and as which roles. */
  merchant?: MerchantRpcAccess<Req>;
  /** The workloads through which a person may make this call (default: every workload that carries people of their kind). */
  people?: readonly WorkloadName[];
  /** Audit every call, reads and workloads' own calls included (a secret read). A person's call to a mutating RPC is always audited. */
  audit?: "always";
  /** The ids the call is about, for the audit's search; by default every top-level `id` and `…Id` field of the request (transactionId, merchantId…). */
  targets?: (req: Req) => Array<string | undefined>;
  /** The reason the operator gave, for the audit. */
  reason?: (req: Req) => string | undefined;
  /**
   * The handler's own check of the request (its parse), run before `approval`: a request that
   * would be refused as invalid is refused now, not stored for a second person to approve.
   */
  validate?: (req: Req) => unknown;
  /** Whether a second operator must approve this request: the need, or undefined when one suffices. */
  approval?: (req: Req, operator: OperatorIdentity) => Promise<ApprovalNeed | undefined>;
  /** The thing the call changes, read before it runs, for the audit's before. */
  before?: (req: Req) => Promise<unknown>;
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

/**
 * The gateway's call for a merchant, pinned to the merchant its signed voice names exactly as a
 * merchant user's call is (`scope`, or the request's `merchantId`).
 */
export interface ApiKeyRpcAccess<Req = unknown> {
  /** The key scopes that admit it: any one of them. */
  scopes: readonly ApiKeyScope[];
  /** For a request that names no merchant: as MerchantRpcAccess.scope. */
  scope?: (req: Req, merchantId: string) => Promise<boolean> | boolean;
}

/** Every merchant role: reads a merchant's viewer may make. */
export const ANY_MERCHANT_ROLE: readonly MerchantRole[] = ["owner", "developer", "finance", "viewer"];
/** Every API key scope: reads any key may make. */
export const ANY_API_KEY: ApiKeyRpcAccess = { scopes: ["read", "deposits", "withdrawals"] };

type MethodsOf<S extends DescService> = S extends { method: infer M } ? M : never;
type InputOf<M> = M extends { input: infer I extends DescMessage } ? MessageShape<I> : never;

/** One permission entry per RPC of a service, by its local (camelCase) name: the type makes a missing one a compile error. */
export type AccessRules<S extends DescService> = { [K in keyof MethodsOf<S>]: RpcAccess<InputOf<MethodsOf<S>[K]>> };

/** A service's permission table, ready for the registry. */
export interface ServiceAccess extends AccessTable {
  service: DescService;
  /** By the method's proto name (`ConfirmDeposit`). */
  rules: ReadonlyMap<string, { method: DescMethod; access: RpcAccess }>;
}

function namesMerchant(method: DescMethod): boolean {
  return method.input.fields.some((f) => f.localName === "merchantId");
}

export function defineAccess<S extends DescService>(service: S, rules: AccessRules<S>): ServiceAccess {
  const byName = new Map<string, { method: DescMethod; access: RpcAccess }>();
  for (const method of service.methods) {
    const access = (rules as Record<string, RpcAccess | undefined>)[method.localName];
    if (!access) throw new Error(`${service.typeName}/${method.name} has no access rule`);
    // Refused at start, not at the first call: a merchant rule that could not be scoped would be an open door.
    if (access.merchant && !access.merchant.scope && !namesMerchant(method)) {
      throw new Error(`${service.typeName}/${method.name} admits merchant users but its request names no merchant: give it a scope`);
    }
    if (access.apiKey && !access.apiKey.scope && !namesMerchant(method)) {
      throw new Error(`${service.typeName}/${method.name} admits the gateway for a merchant but its request names no merchant: give it a scope`);
    }
    if (!access.role && !access.workloads?.length && !access.apiKey && !access.merchant) throw new Error(`${service.typeName}/${method.name} admits nobody`);
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

/** The ids a request is about: its rule's, or its `id` and `…Id` fields. */
export function targetsOf(access: RpcAccess, message: unknown): Array<string | undefined> {
  if (access.targets) return access.targets(message);
  if (!message || typeof message !== "object") return [];
  return Object.entries(message).filter(([k, v]) => (k === "id" || k.endsWith("Id")) && typeof v === "string" && v !== "").map(([, v]) => v as string);
}

/** The role a request needs: its RPC's, or more when the request decides (roleFor). undefined: closed to operators. */
export function neededRole(access: RpcAccess, message: unknown): OperatorRole | undefined {
  if (!access.role) return undefined;
  if (!access.roleFor || message === undefined) return access.role;
  const more = access.roleFor(message);
  return roleAtLeast(more, access.role) ? more : access.role;
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
 * Whether an RPC changes anything, from its descriptor: every read is marked
 * `option idempotency_level = NO_SIDE_EFFECTS` in its proto, so a new RPC is a mutation (audited,
 * walked by the access tests) until its proto says otherwise.
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

/** Sets the request's merchantId to `merchantId` (false when it named another) and clears allMerchants. */
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
