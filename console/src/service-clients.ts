import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createServiceClient, type ClientTlsOptions, type Metrics } from "@payments/kit";
import { audienceOfService, OPERATOR_ASSERTION_HEADER, OPERATOR_SERVICE_HEADER, type AssertionSigner } from "@payments/access";
import { audienceOfCall, operatorAssertionInterceptor, type SERVICE_AUDIENCES } from "./auth/assertions.js";

/** The services the console calls, by the name they carry as an audience. */
export type ServiceName = (typeof SERVICE_AUDIENCES)[number];

/**
 * Where each service is: a URL (split deployment, `*_SERVICE_URL`), or one transport for all of
 * them (the all-in-one's in-process transport, which already carries INTERNAL_API_TOKEN).
 */
export interface ServiceEndpoints {
  urls: Partial<Record<ServiceName, string>>;
  transport?: Transport | undefined;
  token?: string | undefined;
  timeoutMs: number;
  tls?: ClientTlsOptions | undefined;
  metrics?: Metrics | undefined;
}

/** Clients of the services for one operator: every call carries that operator's assertion. */
export interface ServiceDirectory {
  /**
   * A client of `service` whose calls carry `signer`'s assertions. `serviceName` is needed
   * only for the services every deployable serves (`payments.operator.v1.*`): which one to ask.
   */
  client<S extends DescService>(service: S, signer: AssertionSigner, serviceName?: ServiceName): Client<S>;
}

/** A transport whose every call carries an assertion for its service: the interceptor, for a transport built elsewhere. */
function assertingTransport(transport: Transport, signer: AssertionSigner, audience: string | undefined): Transport {
  const withAssertion = async (typeName: string, header: ConstructorParameters<typeof Headers>[0]): Promise<Headers> => {
    const headers = new Headers(header);
    const target = audienceOfCall(typeName, audience);
    if (target) {
      headers.set(OPERATOR_ASSERTION_HEADER, await signer.assertionFor(target));
      // As the kit's interceptor does: a shared service's call names the service it is for.
      if (!audienceOfService(typeName)) headers.set(OPERATOR_SERVICE_HEADER, target);
    }
    return headers;
  };
  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      return transport.unary(method, signal, timeoutMs, await withAssertion(method.parent.typeName, header as ConstructorParameters<typeof Headers>[0]), input, contextValues);
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      return transport.stream(method, signal, timeoutMs, await withAssertion(method.parent.typeName, header as ConstructorParameters<typeof Headers>[0]), input, contextValues);
    },
  };
}

export function createServiceDirectory(endpoints: ServiceEndpoints): ServiceDirectory {
  return {
    client(service, signer, serviceName) {
      const name = serviceName ?? (audienceOfCall(service.typeName, undefined) as ServiceName | undefined);
      if (endpoints.transport) return createClient(service, assertingTransport(endpoints.transport, signer, name));
      const url = name ? endpoints.urls[name] : undefined;
      if (!name || !url) throw new Error(`no address for the service of ${service.typeName}: set ${(name ?? "its").toUpperCase().replace(/-/g, "_")}_SERVICE_URL`);
      return createServiceClient(service, url, {
        token: endpoints.token,
        timeoutMs: endpoints.timeoutMs,
        tls: endpoints.tls,
        metrics: endpoints.metrics,
        // The client was made for `name`: shared-service calls (audit, approvals) go to it, so it is their audience.
        interceptors: [operatorAssertionInterceptor(signer, { audience: name })],
      });
    },
  };
}
