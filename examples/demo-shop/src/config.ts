import { fileURLToPath } from "node:url";

/** The demo's settings, from the environment; every one has a default that fits `pnpm start`. */
export interface DemoConfig {
  /** Where the gateway answers merchants (the SDK's baseUrl). */
  gatewayUrl: string;
  /** The port the shop listens on (0: any free port). */
  port: number;
  /** The host the shop listens on. */
  host: string;
  /**
   * How the gateway reaches this shop: the callback URL is `${publicUrl}/payments/callback`.
   * Unset, it is http://127.0.0.1:{port}, which the all-in-one calls only with
   * CALLBACK_ALLOW_PRIVATE=1 (loopback addresses are refused otherwise, against SSRF).
   */
  publicUrl: string | undefined;
  /** Where the merchant credentials and the orders are kept between runs. */
  dataDir: string;
}

/** examples/demo-shop, whatever the working directory: `pnpm demo` runs from the repository root. */
export const demoRoot = fileURLToPath(new URL("..", import.meta.url));

export function loadConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const port = Number(env.DEMO_PORT ?? "3000");
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`DEMO_PORT must be a port number, not ${env.DEMO_PORT}`);
  return {
    gatewayUrl: trimSlash(env.GATEWAY_URL || "http://127.0.0.1:8080"),
    port,
    host: env.DEMO_HOST || "127.0.0.1",
    publicUrl: env.DEMO_PUBLIC_URL ? trimSlash(env.DEMO_PUBLIC_URL) : undefined,
    dataDir: env.DEMO_DATA_DIR || `${demoRoot}.data`,
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
