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
