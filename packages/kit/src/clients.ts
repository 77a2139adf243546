import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { ClientTlsOptions } from "./internal-tls.js";
import { outgoingInterceptor } from "./interceptors.js";

export interface TransportOptions {
  /** Sent as a bearer token when set (INTERNAL_API_TOKEN). */
  token?: string | undefined;
  /** Deadline of each call unless the caller sets one. */
  timeoutMs?: number | undefined;
  /** CA and client certificate for `https://` URLs (INTERNAL_TLS_*, see loadClientTls); `http://` URLs ignore it. */
  tls?: ClientTlsOptions | undefined;
  interceptors?: Interceptor[];
}

/**
 * gRPC over HTTP/2 to another service, forwarding the request id and the internal token.
 * The URL picks the wire: `http://` is cleartext HTTP/2, `https://` is TLS (the service's
 * certificate must name the URL's host and chain to INTERNAL_TLS_CA, or to the public
 * roots without it).
 */
export function createServiceTransport(baseUrl: string, options: TransportOptions = {}): Transport {
  const tls = new URL(baseUrl).protocol === "https:" ? options.tls : undefined;
  return createGrpcTransport({
    baseUrl,
    interceptors: [outgoingInterceptor(options.token), ...(options.interceptors ?? [])],
    defaultTimeoutMs: options.timeoutMs ?? 5000,
    ...(tls ? { nodeOptions: { ...(tls.ca ? { ca: tls.ca } : {}), ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}) } } : {}),
  });
}

export function createServiceClient<S extends DescService>(service: S, baseUrl: string, options: TransportOptions = {}): Client<S> {
  return createClient(service, createServiceTransport(baseUrl, options));
}
