import { createRouterTransport, type Transport } from "@connectrpc/connect";
import { DEFAULT_RPC_TIMEOUT_MS, type TransportOptions } from "./clients.js";
import { outgoingInterceptor } from "./interceptors.js";
import type { RpcHandlers } from "./rpc-server.js";

export interface InProcessTransportOptions extends TransportOptions {
  /** Aborted when the server closes: ends the handlers still running (their ctx.signal). */
  shutdownSignal?: AbortSignal;
}

/**
 * A call to a service hosted in this process, without HTTP/2 or a socket: Connect's router
 * transport over the routes and server interceptors the port runs (rpcHandlers: request
 * id, errors and metrics, internal token), behind the client interceptors a network client
 * has (request id, token). Like the network path, the message is encoded and decoded (the
 * Connect protocol, binary), so a handler never holds or mutates the caller's object;
 * errors arrive as ConnectErrors with the same code, message and metadata
 * (x-error-reason…); the deadline (timeoutMs) stops the caller's wait and aborts the
 * handler's signal. Nothing is compressed.
 */
export function createInProcessTransport(handlers: RpcHandlers, options: InProcessTransportOptions = {}): Transport {
  return createRouterTransport(handlers.routes, {
    router: { ...handlers.options, ...(options.shutdownSignal ? { shutdownSignal: options.shutdownSignal } : {}) },
    transport: {
      interceptors: [outgoingInterceptor(options.token, options.metrics), ...(options.interceptors ?? [])],
      defaultTimeoutMs: options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS,
    },
  });
}
