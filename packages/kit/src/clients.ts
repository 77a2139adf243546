import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { outgoingInterceptor } from "./interceptors.js";

export interface TransportOptions {
  /** Sent as a bearer token when set (INTERNAL_API_TOKEN). */
  token?: string;
  /** Deadline of each call unless the caller sets one. */
  timeoutMs?: number;
  interceptors?: Interceptor[];
}

/** gRPC over HTTP/2 to another service, forwarding the request id and the internal token. */
export function createServiceTransport(baseUrl: string, options: TransportOptions = {}): Transport {
  return createGrpcTransport({
    baseUrl,
    interceptors: [outgoingInterceptor(options.token), ...(options.interceptors ?? [])],
    defaultTimeoutMs: options.timeoutMs ?? 5000,
  });
}

export function createServiceClient<S extends DescService>(service: S, baseUrl: string, options: TransportOptions = {}): Client<S> {
  return createClient(service, createServiceTransport(baseUrl, options));
}
