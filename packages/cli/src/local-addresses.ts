import { UsageError } from "./errors.js";

type Env = Readonly<Record<string, string | undefined>>;

/*
 * Where the all-in-one this shell started listens. `pnpm start` reads PORT (the gateway),
 * GRPC_PORT (every internal service) and CONSOLE_PORT (the console); when they are set in the
 * environment the CLI's default addresses follow them, so `PORT=18080 GRPC_PORT=19090
 * CONSOLE_PORT=18081 pnpm start` and `pnpm cli …` in the same shell find each other. The CLI's
 * own settings (GRPC_URL and the *_SERVICE_URL variables, CONSOLE_URL, GATEWAY_URL) and its
 * flags (--grpc-url, --base-url) still win over these.
 */

/** The all-in-one's ports when nothing says otherwise. */
export const DEFAULT_PORTS = { PORT: 8080, GRPC_PORT: 9090, CONSOLE_PORT: 8081 } as const;
export type PortSetting = keyof typeof DEFAULT_PORTS;

/** What the CLI says instead of each port setting when the address must be given another way. */
const ADDRESS_SETTING: Readonly<Record<PortSetting, string>> = { PORT: "GATEWAY_URL", GRPC_PORT: "GRPC_URL", CONSOLE_PORT: "CONSOLE_URL" };

/** The port `setting` names (its default when unset or empty); a value that is no port is a usage error naming the setting. */
export function localPort(env: Env, setting: PortSetting): number {
  const raw = env[setting]?.trim();
  if (!raw) return DEFAULT_PORTS[setting];
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (port === 0) {
    throw new UsageError(`${setting} is 0 (a port the system picks), so the CLI cannot tell where it is: set ${ADDRESS_SETTING[setting]} to the address \`pnpm start\` printed`);
  }
  if (!(port >= 1 && port <= 65_535)) {
    throw new UsageError(`${setting} must be a port number from 1 to 65535 (the CLI's default address follows it, as \`pnpm start\` does), got "${raw}"; or set ${ADDRESS_SETTING[setting]}`);
  }
  return port;
}

/** The internal services of the all-in-one: http://127.0.0.1:<GRPC_PORT>, 9090 by default. */
export const localGrpcUrl = (env: Env): string => `http://127.0.0.1:${localPort(env, "GRPC_PORT")}`;

/** The console of the all-in-one: http://127.0.0.1:<CONSOLE_PORT>, 8081 by default. */
export const localConsoleUrl = (env: Env): string => `http://127.0.0.1:${localPort(env, "CONSOLE_PORT")}`;

/** The gateway of the all-in-one: http://localhost:<PORT>, 8080 by default. */
export const localGatewayUrl = (env: Env): string => `http://localhost:${localPort(env, "PORT")}`;
