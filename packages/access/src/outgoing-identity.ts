import { AsyncLocalStorage } from "node:async_hooks";
import type { DescMethod } from "@bufbuild/protobuf";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { isMutating, OPERATOR_SERVICE_HEADER } from "./access-table.js";
import { audienceOfService, OPERATOR_ASSERTION_HEADER, type AssertionSigner } from "./operator-assertion.js";
import { WORKLOAD_HEADER, type LocalIdentities, type MerchantVoice, type WorkloadSigner } from "./workload-identity.js";

/**
 * What a caller puts in `x-workload-identity` for a call to one service: a signed workload
 * assertion (a process calling over the network), or a local identity (a part of the all-in-one
 * calling another in the same process).
 */
export interface CallerIdentity {
  /** The SPIFFE ID it proves. */
  readonly id: string;
  headerFor(audience: string, merchant?: MerchantVoice): Promise<string> | string;
}

export function signedIdentity(signer: WorkloadSigner): CallerIdentity {
  return { id: signer.id, headerFor: (audience, merchant) => signer.tokenFor(audience, merchant) };
}

export function localIdentity(local: LocalIdentities, id: string): CallerIdentity {
  return { id, headerFor: (_audience, merchant) => local.headerFor(id, merchant) };
}

const merchantVoice = new AsyncLocalStorage<MerchantVoice | undefined>();

/**
 * Runs `fn` with every call the gateway makes in it speaking for `voice`: the merchant and the
 * API key it verified, signed into the gateway's own workload assertion. Only the gateway's
 * assertions may carry one; a service refuses it from anyone else.
 */
export function speakForMerchant<T>(voice: MerchantVoice, fn: () => T): T {
  return merchantVoice.run(voice, fn);
}

/** The merchant the current request speaks for, if any (speakForMerchant). */
export function spokenMerchant(): MerchantVoice | undefined {
  return merchantVoice.getStore();
}

/**
 * Runs `fn` speaking for no merchant: what a service's handler runs in, so that its own calls (in
 * the all-in-one, made in the async context of the gateway's request) never carry the voice the
 * gateway spoke with.
 */
export function speakForNoMerchant<T>(fn: () => T): T {
  return merchantVoice.getStore() === undefined ? fn() : merchantVoice.run(undefined, fn);
}

/** The voice a caller may carry: the gateway's alone (anyone else's would be refused by the service). */
function voiceOf(caller: CallerIdentity): MerchantVoice | undefined {
  return caller.id.endsWith("/gateway") ? merchantVoice.getStore() : undefined;
}

/**
 * The service a call goes to, as its audience: the one that owns the proto service, or for the
 * services every service serves (audit, approvals) the one `x-payments-service` names (else
 * `fallback`, the service the client was made for). undefined for health and reflection.
 */
function audienceOfCall(typeName: string, header: Headers, fallback: string | undefined): string | undefined {
  return audienceOfService(typeName) ?? header.get(OPERATOR_SERVICE_HEADER) ?? fallback;
}

/**
 * The client side of workload identity: every call carries the caller's identity for the service
 * it goes to (and, when the gateway speaks for a merchant in speakForMerchant, that merchant). A
 * call that already carries one (an approved request run as its approver) keeps it.
 */
export function workloadIdentityInterceptor(caller: CallerIdentity, options: { audience?: string } = {}): Interceptor {
  return (next) => async (req) => {
    if (!req.header.has(WORKLOAD_HEADER)) {
      const audience = audienceOfCall(req.service.typeName, req.header, options.audience);
      if (audience) req.header.set(WORKLOAD_HEADER, await caller.headerFor(audience, voiceOf(caller)));
    }
    return next(req);
  };
}

/**
 * The client side of a person's assertion: every call carries the signer's assertion for the
 * service it goes to (audienceOfService). The services every service serves (audit, approvals)
 * take their audience from `service`, sent as x-payments-service too, so a process hosting
 * several knows which. A call that changes anything gets an assertion of its own, never one
 * used before (the services accept each once).
 */
export function operatorAssertionInterceptor(signer: AssertionSigner, service?: string): Interceptor {
  return (next) => async (req) => {
    const audience = audienceOfService(req.service.typeName) ?? service;
    if (audience) {
      req.header.set(OPERATOR_ASSERTION_HEADER, await signer.assertionFor(audience, { fresh: isMutating(req.method) }));
      if (!audienceOfService(req.service.typeName)) req.header.set(OPERATOR_SERVICE_HEADER, audience);
    }
    return next(req);
  };
}

/** `transport` with headers added to every call before it goes (for a transport made elsewhere, such as an in-process one). */
export function withHeaders(transport: Transport, add: (method: DescMethod, header: Headers) => Promise<void> | void): Transport {
  const headersOf = async (method: DescMethod, header: ConstructorParameters<typeof Headers>[0] | undefined): Promise<Headers> => {
    const headers = new Headers(header);
    await add(method, headers);
    return headers;
  };
  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      return transport.unary(method, signal, timeoutMs, await headersOf(method, header as ConstructorParameters<typeof Headers>[0]), input, contextValues);
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      return transport.stream(method, signal, timeoutMs, await headersOf(method, header as ConstructorParameters<typeof Headers>[0]), input, contextValues);
    },
  };
}

/** `transport` with `caller`'s workload identity on every call (and the merchant the current request speaks for). */
export function withWorkloadIdentity(transport: Transport, caller: CallerIdentity, options: { audience?: string } = {}): Transport {
  return withHeaders(transport, async (method, header) => {
    if (header.has(WORKLOAD_HEADER)) return;
    const audience = audienceOfCall(method.parent.typeName, header, options.audience);
    if (audience) header.set(WORKLOAD_HEADER, await caller.headerFor(audience, voiceOf(caller)));
  });
}
