import { z } from "zod";
import { envVar, loadConfig, migrationConfigSchema, trustedProxiesVar, type Env } from "@payments/kit";

/**
 * Every setting of the console, read from the environment. The console's own settings are
 * prefixed `CONSOLE_` because the all-in-one process reads one environment for the gateway,
 * the services and the console, and `PORT`/`HOST` are the gateway's there.
 */
export const consoleConfigSchema = z.object({
  CONSOLE_PORT: envVar.port(8081),
  /**
   * Whom this console serves: `operators` (the operators' console and its APIs), `merchants` (the
   * merchant dashboard under /merchant only: a public deployment that never exposes an operator
   * page, sign-in, the CLI's session API or the admin API) or `both` (the all-in-one).
   */
  CONSOLE_AUDIENCE: z.enum(["operators", "merchants", "both"]).default("operators"),
  // Loopback by default: the console is the people's edge to every service, not something to expose by accident.
  CONSOLE_HOST: z.string().default("127.0.0.1"),
  /** How operators reach the console; links (set-password) start with it. https turns Secure cookies on. */
  CONSOLE_PUBLIC_URL: envVar
    .url(["http", "https"])
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  /**
   * Where merchant users reach the merchant dashboard, when that is another console than this one
   * (CONSOLE_AUDIENCE=merchants elsewhere): their one-time links start with it. Default: CONSOLE_PUBLIC_URL.
   */
  CONSOLE_MERCHANT_PUBLIC_URL: envVar
    .url(["http", "https"])
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  /** 1: cookies carry Secure even when CONSOLE_PUBLIC_URL is not https (TLS ends at a proxy that rewrites nothing). */
  CONSOLE_SECURE_COOKIES: envVar.flag(false),
  /** 1: admins and finance must enrol a TOTP second factor before they can do anything else. */
  CONSOLE_REQUIRE_TOTP: envVar.flag(false),
  /** Unset: in the split deployment DATABASE_URL as is; in the all-in-one `<DATABASE_URL>_console`. */
  CONSOLE_DATABASE_URL: envVar.url(["mysql"]).optional(),
  DATABASE_URL: envVar.url(["mysql"]).optional(),
  DATA_DIR: z.string().default("./var"),
  DATABASE_POOL_MAX: envVar.int(5, 1),
  /** Ed25519 private key (PEM text, `\n` allowed, or a file path) that signs operator assertions. */
  OPERATOR_ASSERTION_PRIVATE_KEY: z.string().min(1).optional(),
  /**
   * 32 bytes (64 hex characters or base64) sealing TOTP secrets at rest (AES-256-GCM). Unset:
   * secrets are stored as they are (a warning is logged in the split deployment).
   */
  CONSOLE_TOTP_KEY: z
    .string()
    .refine((text) => keyBytes(text) !== undefined, "expected 32 bytes as 64 hex characters or base64")
    .optional(),
  CONSOLE_IDLE_TIMEOUT: envVar.duration("30m").refine((v) => v >= 60_000, "must be at least 1m"),
  CONSOLE_SESSION_LIFETIME: envVar.duration("12h").refine((v) => v >= 60_000, "must be at least 1m"),
  CONSOLE_CLI_SESSION_LIFETIME: envVar.duration("12h").refine((v) => v >= 60_000, "must be at least 1m"),
  CONSOLE_SIGN_IN_LINK_TTL: envVar.duration("24h").refine((v) => v >= 60_000, "must be at least 1m"),
  CONSOLE_APPROVAL_TTL: envVar.duration("24h").refine((v) => v >= 60_000, "must be at least 1m"),
  /** Failed sign-ins per account, and per client IP, within CONSOLE_SIGN_IN_WINDOW before sign-in is refused (429). */
  CONSOLE_SIGN_IN_ACCOUNT_LIMIT: envVar.int(5, 1),
  CONSOLE_SIGN_IN_IP_LIMIT: envVar.int(20, 1),
  CONSOLE_SIGN_IN_WINDOW: envVar.duration("15m").refine((v) => v >= 1000, "must be at least 1s"),
  TRUSTED_PROXIES: trustedProxiesVar(),
  BODY_LIMIT: envVar.int(65536, 1),
  /** A file upload's body limit (bytes): the statement import takes files up to this size. */
  CONSOLE_UPLOAD_LIMIT: envVar.int(10 * 1024 * 1024, 1),
  // Where the services are, for the pages that call them (split mode). The all-in-one passes a transport.
  MERCHANT_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  BANK_CATALOG_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  DEPOSIT_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  PAYOUT_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  CALLBACK_SENDER_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  INTERNAL_API_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  RPC_TIMEOUT: envVar.duration("5s"),
  /** With it, GET /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`; without, only loopback and private callers. */
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  SHUTDOWN_GRACE: envVar.duration("10s"),
  LOG_LEVEL: envVar.logLevel(),
  /**
   * Where one-time links (invitations, resets) are mailed from: `smtp://user:pass@host:587`
   * (STARTTLS when the server offers it) or `smtps://user:pass@host:465`. Unset: no mail, the
   * links are shown on screen to whoever hands them over.
   */
  SMTP_URL: envVar.url(["smtp", "smtps"]).optional(),
  /** The sender of those mails, `payments@example.com` or `Payments <payments@example.com>`: required with SMTP_URL. */
  MAIL_FROM: z
    .string()
    .trim()
    .refine(isMailFrom, "expected an address, e.g. payments@example.com or Payments <payments@example.com>")
    .optional(),
  ...migrationConfigSchema.shape,
}).superRefine((config, ctx) => {
  if (config.SMTP_URL && !config.MAIL_FROM) ctx.addIssue({ code: "custom", path: ["MAIL_FROM"], message: "required when SMTP_URL is set: the address the console's mail is sent from" });
});

/** `a@b.example` or `Name <a@b.example>`, on one line (nothing that could start another header). */
export function isMailFrom(text: string): boolean {
  if (/[\r\n]/.test(text)) return false;
  const named = /^[^<>"]*<([^<>]+)>$/.exec(text);
  return /^[^\s@<>",;]+@[^\s@<>",;]+\.[^\s@<>",;]+$/.test(named ? named[1]! : text);
}

export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;

export function loadConsoleConfig(env: Env = process.env): ConsoleConfig {
  return loadConfig(consoleConfigSchema, env);
}

/** 32 key bytes from 64 hex characters or base64, else undefined. */
export function keyBytes(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  return bytes.length === 32 ? bytes : undefined;
}

/** Cookies carry Secure when operators reach the console over https, or when told to. */
export function secureCookies(config: Pick<ConsoleConfig, "CONSOLE_PUBLIC_URL" | "CONSOLE_SECURE_COOKIES">): boolean {
  return config.CONSOLE_SECURE_COOKIES || (config.CONSOLE_PUBLIC_URL?.startsWith("https://") ?? false);
}

/** Whether this console serves the operators' side (`operators`, `both`). */
export function servesOperators(config: Pick<ConsoleConfig, "CONSOLE_AUDIENCE">): boolean {
  return config.CONSOLE_AUDIENCE !== "merchants";
}

/** Whether this console serves the merchant dashboard (`merchants`, `both`). */
export function servesMerchants(config: Pick<ConsoleConfig, "CONSOLE_AUDIENCE">): boolean {
  return config.CONSOLE_AUDIENCE !== "operators";
}
