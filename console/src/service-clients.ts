import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createServiceClient, type ClientTlsOptions, type Metrics } from "@payments/kit";
import { withWorkloadIdentity, workloadIdentityInterceptor, type AssertionSigner, type CallerIdentity } from "@payments/access";
import { audienceOfCall, operatorAssertionInterceptor, withAssertions, type SERVICE_AUDIENCES } from "./identity/assertions.js";

/** The services the console calls, by the name they carry as an audience. */
export type ServiceName = (typeof SERVICE_AUDIENCES)[number];

/**
 * Where each service is: a URL (split deployment, `*_SERVICE_URL`), or one transport for all of
 * them (the all-in-one's in-process transport, which already carries INTERNAL_API_TOKEN), and who
 * the console is on every call (its workload identity: the console, or the merchant dashboard).
 */
export interface ServiceEndpoints {
  urls: Partial<Record<ServiceName, string>>;
  transport?: Transport | undefined;
  identity: CallerIdentity;
  token?: string | undefined;
  timeoutMs: number;
  tls?: ClientTlsOptions | undefined;
  metrics?: Metrics | undefined;
}

/** Clients of the services for one person: every call carries the console's identity and that person's assertion. */
export interface ServiceDirectory {
  /**
   * A client of `service` whose calls carry `signer`'s assertions. `serviceName` is needed
   * only for the services every deployable serves (`payments.operator.v1.*`): which one to ask.
   */
  client<S extends DescService>(service: S, signer: AssertionSigner, serviceName?: ServiceName): Client<S>;
}

export function createServiceDirectory(endpoints: ServiceEndpoints): ServiceDirectory {
  // In process (the all-in-one): the console's identity on every call of the one shared transport.
  const local = endpoints.transport ? withWorkloadIdentity(endpoints.transport, endpoints.identity) : undefined;
  return {
    client(service, signer, serviceName) {
      const name = serviceName ?? (audienceOfCall(service.typeName, undefined) as ServiceName | undefined);
      if (local) return createClient(service, withAssertions(local, signer, name));
      const url = name ? endpoints.urls[name] : undefined;
      if (!name || !url) throw new Error(`no address for the service of ${service.typeName}: set ${(name ?? "its").toUpperCase().replace(/-/g, "_")}_SERVICE_URL`);
      return createServiceClient(service, url, {
        token: endpoints.token,
        timeoutMs: endpoints.timeoutMs,
        tls: endpoints.tls,
        metrics: endpoints.metrics,
        // The client was made for `name`: shared-service calls (audit, approvals) go to it, so it is their audience.
        interceptors: [operatorAssertionInterceptor(signer, { audience: name }), workloadIdentityInterceptor(endpoints.identity, { audience: name })],
      });
    },
  };
}
