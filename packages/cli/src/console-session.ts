import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { AssertionSigner } from "@payments/access";
import { CommandFailed, UnreachableError, UsageError } from "./errors.js";
import { localConsoleUrl } from "./local-addresses.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Where `pnpm start` (and a local console) serves the console unless CONSOLE_PORT says otherwise. */
export const DEFAULT_CONSOLE_URL = "http://127.0.0.1:8081";

/** Refresh an assertion this long before it expires, so a call never carries one about to lapse. */
const RENEW_BEFORE_MS = 10_000;

/** What `login` keeps: the CLI token (12 h), never the password. */
export interface CachedSession {
  consoleUrl: string;
  token: string;
  expiresAt: string;
  email: string;
  role: string;
}

/** CONSOLE_URL, else the all-in-one's console: 127.0.0.1 on CONSOLE_PORT (8081 unless set). */
export function consoleUrl(env: Env): string {
  const value = env.CONSOLE_URL?.trim() || localConsoleUrl(env);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new UsageError(`CONSOLE_URL must be an http:// or https:// URL, got "${value}"`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`CONSOLE_URL must be an http:// or https:// URL, got "${value}"`);
  return value.replace(/\/+$/, "");
}

/** `$XDG_CONFIG_HOME/payments/session.json`, else `~/.config/payments/session.json`. */
export function sessionFile(env: Env): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), ".config");
  return join(base, "payments", "session.json");
}

/** Stores the session readable by its owner only (0600, in a 0700 directory): the token is a credential. */
export function saveSession(env: Env, session: CachedSession): string {
  const file = sessionFile(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  // writeFileSync keeps the mode of a file that existed: set it again.
  chmodSync(file, 0o600);
  return file;
}

/** The cached session while it is unexpired, else undefined. */
export function loadSession(env: Env, now = new Date()): CachedSession | undefined {
  let parsed: Partial<CachedSession>;
  try {
    parsed = JSON.parse(readFileSync(sessionFile(env), "utf8")) as Partial<CachedSession>;
  } catch {
    return undefined;
  }
  if (typeof parsed.token !== "string" || typeof parsed.expiresAt !== "string" || typeof parsed.consoleUrl !== "string") return undefined;
  if (Date.parse(parsed.expiresAt) <= now.getTime()) return undefined;
  return { consoleUrl: parsed.consoleUrl, token: parsed.token, expiresAt: parsed.expiresAt, email: parsed.email ?? "", role: parsed.role ?? "" };
}

export function forgetSession(env: Env): void {
  rmSync(sessionFile(env), { force: true });
}

/** A JSON call to the console; its refusals become a CommandFailed naming the console's code. */
export async function consoleCall(url: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  let res: Response;
  try {
    res = await fetch(`${url}${path}`, {
      method,
      headers: {
        accept: "application/json",
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    throw new UnreachableError(url, (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message);
  }
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    throw new CommandFailed(`the console at ${url} answered ${res.status} with something that is not JSON`);
  }
  if (res.status >= 400) {
    const error = body.error as { code?: string; message?: string } | undefined;
    const hint = res.status === 401 && path !== "/api/cli/sessions" ? " — run `login` (or set PAYMENTS_OPERATOR_TOKEN)" : "";
    throw new CommandFailed(`${error?.code ?? `HTTP_${res.status}`}: ${error?.message ?? "the console refused the request"}${hint}`);
  }
  return { status: res.status, body };
}

/**
 * The bearer the admin commands send: PAYMENTS_OPERATOR_TOKEN (a service account's token from
 * `operator token`, or any admin assertion for the console), else the cached `login` session.
 */
export function adminCredential(env: Env): { url: string; token: string } {
  const fixed = env.PAYMENTS_OPERATOR_TOKEN?.trim();
  if (fixed) return { url: consoleUrl(env), token: fixed };
  const session = loadSession(env);
  if (!session) throw new UsageError("not signed in: run `login` first (or set PAYMENTS_OPERATOR_TOKEN)");
  return { url: session.consoleUrl, token: session.token };
}

/**
 * The assertions the CLI attaches to its calls to the services for the operator signed in with
 * `login`: 60-second assertions the console signs for the cached session, one per audience, each
 * reused until 10 s before it expires. undefined when no unexpired session is cached (the next
 * source of an identity then applies: see operator-signer.ts).
 */
export function consoleAssertionSigner(env: Env): AssertionSigner | undefined {
  const session = loadSession(env);
  return session ? exchangingSigner(session.consoleUrl, session.token) : undefined;
}

/**
 * Assertions the console signs for whoever `token` is (a `login` session, or a service account's
 * token from `operator token`): one per audience, reused for reads until 10 s before it expires,
 * and a fresh one for every call that changes anything (the services accept each such one once).
 */
export function exchangingSigner(consoleUrl: string, token: string): AssertionSigner {
  const cache = new Map<string, { assertion: string; renewAt: number }>();
  return {
    async assertionFor(audience, options) {
      const held = cache.get(audience);
      if (held && held.renewAt > Date.now() && !options?.fresh) return held.assertion;
      const { body } = await consoleCall(consoleUrl, "POST", "/api/cli/assertions", { token, body: { audience } });
      const assertion = body.assertion;
      if (typeof assertion !== "string") throw new CommandFailed("the console answered no assertion");
      const expiresAt = typeof body.expiresAt === "string" ? Date.parse(body.expiresAt) : Date.now();
      if (!options?.fresh) cache.set(audience, { assertion, renewAt: expiresAt - RENEW_BEFORE_MS });
      return assertion;
    },
  };
}
