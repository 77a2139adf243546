import { AsyncLocalStorage } from "node:async_hooks";
import { isMerchantUser, type ActorIdentity } from "./operator-assertion.js";
import type { MerchantVoice, WorkloadIdentity } from "./workload-identity.js";

/** An approved request being run: the interceptor lets exactly this call past its approval, as the approver's workload. */
export interface ApprovedRun {
  approvalId: string;
  module: string;
  rpc: string;
  maker: string;
  makerRole: string;
  /** The workload the approver came through: the run is theirs. */
  workload: WorkloadIdentity;
}

/** Who the call in progress comes from, as the service verified it. */
export interface CallScope {
  workload: WorkloadIdentity;
  /** The person it acts for (an operator or a merchant's user), when one did. */
  operator?: ActorIdentity;
  /** Set when the call runs an approved request: the maker asked, `operator` approved. */
  approved?: ApprovedRun;
}

/** The scope a handler runs in (undefined outside a checked call: a background job). */
export const callScope = new AsyncLocalStorage<CallScope | undefined>();
/** Set by the ApprovalService around the one call that runs an approved request. */
export const approvedRunScope = new AsyncLocalStorage<ApprovedRun | undefined>();

/** The person the current call acts for, with the workload that carried it; undefined for a workload's own call. */
export function currentOperator(): (CallScope & { operator: ActorIdentity }) | undefined {
  const current = callScope.getStore();
  return current?.operator ? (current as CallScope & { operator: ActorIdentity }) : undefined;
}

/** The verified caller of the current call, or undefined outside one. */
export function currentCall(): CallScope | undefined {
  return callScope.getStore();
}

/** The merchant the gateway speaks for in the current call, with the key the merchant signed with. */
export function currentMerchantKey(): MerchantVoice | undefined {
  return callScope.getStore()?.workload.merchant;
}

/**
 * The person a service records as deciding in the current call: the verified subject of the
 * operator's or merchant user's assertion (for an approved request, maker and approver both),
 * else `fallback` (a workload's own call, or outside a checked call).
 */
export function actingName(fallback: string): string {
  const current = callScope.getStore();
  if (!current?.operator) return fallback;
  if (current.approved) return `${current.approved.maker}, approved by ${current.operator.subject}`;
  return current.operator.subject;
}

/**
 * Who the current call is, in words for a money record (a transfer's reporter, a deposit's
 * completer, a withdrawal's creator): the person and the workload that carried them
 * (`alice@example.com via spiffe://payments.local/console`), for an approved request maker and
 * approver, the merchant's API key and the gateway, or the workload alone
 * (`spiffe://payments.local/bank-integration/garanti`). `fallback` outside a checked call.
 */
export function callerAttribution(fallback: string): string {
  const current = callScope.getStore();
  if (!current) return fallback;
  const via = current.workload.id;
  if (current.operator) {
    const who = isMerchantUser(current.operator) ? `${current.operator.subject} of ${current.operator.merchantId}` : current.operator.subject;
    return current.approved ? `${current.approved.maker}, approved by ${who} via ${via}` : `${who} via ${via}`;
  }
  if (current.workload.merchant) return `API key ${current.workload.merchant.keyId} of ${current.workload.merchant.merchantId} via ${via}`;
  return via;
}

/** Runs `fn` (a call to this process's own handlers) as the approved run of one approval. */
export function runApproved<T>(run: ApprovedRun, fn: () => Promise<T>): Promise<T> {
  return approvedRunScope.run(run, fn);
}
