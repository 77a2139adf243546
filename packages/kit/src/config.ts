import { BlockList, isIPv4, isIPv6 } from "node:net";
import ms from "ms";
import { z } from "zod";

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Parses the environment with a zod object schema whose keys are the variable names.
 * Empty values count as unset, so `FOO=` falls back to the default. Every problem is
 * reported at once, each line naming its variable.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: Env = process.env): z.infer<S> {
  const present: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== "") present[key] = value;
  }
  const result = schema.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `${issue.path.join(".") || "(environment)"}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  return result.data;
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/**
 * True when a listener bound to `host` is reachable only from this machine: 127.0.0.0/8,
 * ::1 (in any spelling, IPv4-mapped loopback included) or the name `localhost`. The
 * wildcards `0.0.0.0` and `::`, other addresses and other names are not.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.trim().replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost") return true;
  if (isIPv4(bare)) return loopback.check(bare, "ipv4");
  if (isIPv6(bare)) return loopback.check(bare, "ipv6");
  return false;
}

/**
 * The closed internal boundary: an internal API that other machines can reach must ask every
 * caller for INTERNAL_API_TOKEN too. The token grants nothing by itself (every call must also
 * prove its caller's workload identity, @payments/access); it is a second lock at the network's
 * edge, so a port exposed by mistake answers a stranger nothing but health checks. Returns why
 * the settings are refused, or undefined when they are fine (loopback needs no token).
 */
export function internalTokenProblem(settings: { GRPC_HOST: string; INTERNAL_API_TOKEN?: string | undefined }): string | undefined {
  if (settings.INTERNAL_API_TOKEN || isLoopbackHost(settings.GRPC_HOST)) return undefined;
  return (
    `required because GRPC_HOST=${settings.GRPC_HOST} is not a loopback address: other machines can reach the internal API, ` +
    `and anyone who reaches it could probe every internal RPC (each call still needs its caller's workload identity; the token is the second lock). ` +
    `Set INTERNAL_API_TOKEN (at least 16 characters, the same on every service, the gateway and the CLI), or bind GRPC_HOST to 127.0.0.1`
  );
}

/** Throws the ConfigError of internalTokenProblem, before anything listens. */
export function assertInternalBoundary(settings: { GRPC_HOST: string; INTERNAL_API_TOKEN?: string | undefined }): void {
  const problem = internalTokenProblem(settings);
  if (problem) throw new ConfigError(`invalid configuration:\n  INTERNAL_API_TOKEN: ${problem}`);
}

/** Parses "100ms", "5s", "30m", "24h", "7d" or a plain number of milliseconds. */
export function parseDuration(text: string): number | undefined {
  const value = /^\d+$/.test(text.trim()) ? Number(text) : ms(text.trim() as ms.StringValue);
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Schema builders for environment variables. */
export const envVar = {
  /** A duration such as "30m"; the parsed value is milliseconds. */
  duration: (fallback: string) =>
    z
      .string()
      .default(fallback)
      .transform((text, ctx) => {
        const value = parseDuration(text);
        if (value === undefined) {
          ctx.addIssue({ code: "custom", message: `"${text}" is not a duration (examples: 100ms, 5s, 30m, 24h)` });
          return z.NEVER;
        }
        return value;
      }),
  /** A comma-separated list of durations, e.g. "5s,5m,30m". */
  durations: (fallback: string) =>
    z
      .string()
      .default(fallback)
      .transform((text, ctx) => {
        const values = text.split(",").map((part) => parseDuration(part));
        if (values.some((v) => v === undefined)) {
          ctx.addIssue({ code: "custom", message: `"${text}" is not a comma-separated list of durations` });
          return z.NEVER;
        }
        return values as number[];
      }),
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  int: (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback),
  flag: (fallback = false) =>
    z
      .enum(["1", "0", "true", "false", "yes", "no", "on", "off"], { message: "expected 1/0, true/false, yes/no or on/off" })
      .optional()
      .transform((v) => (v === undefined ? fallback : ["1", "true", "yes", "on"].includes(v))),
  url: (protocols: string[]) =>
    z.string().refine((text) => {
      try {
        return protocols.includes(new URL(text).protocol.replace(/:$/, ""));
      } catch {
        return false;
      }
    }, `expected a ${protocols.join(" or ")} URL`),
  list: () =>
    z
      .string()
      .default("")
      .transform((text) =>
        text
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s.length > 0),
      ),
  /** Comma-separated ISO 4217 codes, upper-cased; empty means TRY only. */
  currencies: () =>
    z
      .string()
      .default("")
      .transform((text) => text.split(",").map((c) => c.trim().toUpperCase()).filter((c) => c.length > 0))
      .transform((codes) => (codes.length === 0 ? ["TRY"] : codes))
      .refine((codes) => codes.every((c) => /^[A-Z]{3}$/.test(c)), "expected comma-separated three-letter currency codes, e.g. TRY,EUR"),
  logLevel: () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
};
