import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { generateAssertionKeyPair, signAssertion, type OperatorRole } from "@payments/access";
import { manualClock, TEST_WORKLOAD_ENV, type ManualClock } from "@payments/testing";
import { startConsole, type RunningConsole } from "../src/index.js";

export interface TestConsole {
  console: RunningConsole;
  clock: ManualClock;
  privateKey: KeyObject;
  publicKey: KeyObject;
  url: string;
}

/** A console of one test's own: SQLite in a temporary directory (unless env names MySQL), a fresh key, a clock the test moves. */
export async function testConsole(t: ExecutionContext, env: Record<string, string> = {}): Promise<TestConsole> {
  const dir = mkdtempSync(join(tmpdir(), "console-test-"));
  const { privateKeyPem } = generateAssertionKeyPair();
  const clock = manualClock();
  const running = await startConsole({
    env: { DATA_DIR: dir, CONSOLE_PORT: "0", LOG_LEVEL: "silent", ...TEST_WORKLOAD_ENV, ...env },
    clock,
    assertionPrivateKey: privateKeyPem,
  });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const privateKey = createPrivateKey(privateKeyPem);
  return { console: running, clock, privateKey, publicKey: createPublicKey(privateKey), url: running.url };
}

/** A service account's admin token for the console, as `operator token` mints it: what bootstraps the first admin. */
export function serviceAdminToken(c: TestConsole, subject = "bootstrap-bot"): Promise<string> {
  return signAssertion(c.privateKey, { subject, name: subject, role: "admin", kind: "service", audience: ["console"], ttlSeconds: 3600 }, c.clock.now());
}

export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A JSON call to the console's API with a bearer token. */
export async function api(c: TestConsole, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<JsonAnswer> {
  const res = await fetch(`${c.url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

/** A browser: keeps cookies, does not follow redirects (tests look at them). */
export class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly c: TestConsole) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const index = pair.indexOf("=");
      const name = pair.slice(0, index);
      const value = decodeURIComponent(pair.slice(index + 1));
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private header(): Record<string, string> {
    return this.cookies.size > 0 ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; ") } : {};
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; location: string | null; html: string; headers: Headers }> {
    const res = await fetch(`${this.c.url}${path}`, { redirect: "manual", headers: { ...this.header(), ...headers } });
    this.remember(res);
    return { status: res.status, location: res.headers.get("location"), html: await res.text(), headers: res.headers };
  }

  async post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; location: string | null; html: string; headers: Headers }> {
    const res = await fetch(`${this.c.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { ...this.header(), "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(form).toString(),
    });
    this.remember(res);
    return { status: res.status, location: res.headers.get("location"), html: await res.text(), headers: res.headers };
  }

  /** A multipart/form-data post (a form with a file), as a browser sends one. */
  async postMultipart(path: string, form: FormData): Promise<{ status: number; location: string | null; html: string }> {
    const res = await fetch(`${this.c.url}${path}`, { method: "POST", redirect: "manual", headers: this.header(), body: form });
    this.remember(res);
    return { status: res.status, location: res.headers.get("location"), html: await res.text() };
  }
}

/** The value of the hidden `_csrf` field of a page. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]*)"/.exec(html);
  if (!match?.[1]) throw new Error("no _csrf field on the page");
  return match[1];
}

/**
 * What a change of the admin API did: the answer's own body (done at once: bootstrap), or, when it
 * waits for a second admin (202), the answer of its approval by another service admin
 * (`second-bot`, the key holder's second account), who is the one its link is handed to.
 */
export async function doneOf(c: TestConsole, answer: JsonAnswer, approver = "second-bot"): Promise<Record<string, unknown>> {
  if (answer.status === 201 || answer.status === 200) return answer.body;
  if (answer.status !== 202) throw new Error(`${answer.status} ${JSON.stringify(answer.body)}`);
  const approved = await api(c, "POST", `/api/approvals/${(answer.body.approval as { id: string }).id}/approve`, { token: await serviceAdminToken(c, approver) });
  if (approved.status !== 200) throw new Error(`approve: ${approved.status} ${JSON.stringify(approved.body)}`);
  return approved.body;
}

/** The one-time link a change of the admin API made (doneOf). */
export async function linkOf(c: TestConsole, answer: JsonAnswer, approver = "second-bot"): Promise<string> {
  return ((await doneOf(c, answer, approver)).link as { url: string }).url;
}

/**
 * An operator created through the admin API (bootstrap token; approved by a second service admin
 * once an admin exists) who has set a password through the one-time link.
 */
export async function operatorWithPassword(c: TestConsole, input: { email: string; role: OperatorRole; password?: string; adminToken?: string }): Promise<{ email: string; password: string }> {
  const password = input.password ?? "correct horse battery staple";
  const token = input.adminToken ?? (await serviceAdminToken(c));
  const created = await api(c, "POST", "/api/operators", { token, body: { email: input.email, displayName: input.email.split("@")[0], role: input.role } });
  let url: string;
  try {
    url = await linkOf(c, created);
  } catch (err) {
    throw new Error(`create ${input.email}: ${(err as Error).message}`, { cause: err });
  }
  const set = await setPasswordThroughLink(c, url, password);
  if (set.status !== 303) throw new Error(`set password of ${input.email}: ${set.status}`);
  return { email: input.email, password };
}

/** Opens a set-password link in a fresh browser and submits the password twice. */
export async function setPasswordThroughLink(c: TestConsole, url: string, password: string): Promise<{ status: number; location: string | null; html: string }> {
  const browser = new Browser(c);
  const path = new URL(url).pathname + new URL(url).search;
  const page = await browser.get(path);
  if (page.status !== 200) return { status: page.status, location: page.location, html: page.html };
  const token = new URL(url).searchParams.get("token") ?? "";
  return browser.post("/set-password", { _csrf: csrfOf(page.html), token, password, confirm: password });
}

/** Signs in through the page; returns the browser holding the session. */
export async function signedInBrowser(c: TestConsole, email: string, password: string, totp?: string): Promise<{ browser: Browser; status: number; location: string | null }> {
  const browser = new Browser(c);
  const page = await browser.get("/sign-in");
  const res = await browser.post("/sign-in", { _csrf: csrfOf(page.html), email, password, ...(totp ? { totp } : {}) });
  return { browser, status: res.status, location: res.location };
}

/** A CLI session token for the operator. */
export async function cliToken(c: TestConsole, email: string, password: string, totp?: string): Promise<string> {
  const res = await api(c, "POST", "/api/cli/sessions", { body: { email, password, ...(totp ? { totp } : {}) } });
  if (res.status !== 201) throw new Error(`CLI sign-in ${email}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token as string;
}
