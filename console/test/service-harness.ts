import { mkdtempSync, rmSync } from "node:fs";
import type { ExecutionContext, TestFn } from "ava";
import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { CallbackService } from "@payments/contracts/callback";
import type { RunningServices } from "@payments/kit";
import type { OperatorRole } from "@payments/access";
import { createServiceClient, TEST_OPERATOR_PRIVATE_KEY_PEM, TEST_WORKLOAD_ENV, type ManualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { startConsole } from "../src/index.js";
import { api, Browser, csrfOf, linkOf, serviceAdminToken, setPasswordThroughLink, signedInBrowser, type TestConsole } from "./harness.js";

/** The wall clock, as the services read it (assertions are checked against their clock), with the ManualClock shape the harness takes. */
function liveClock(): ManualClock {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    set: (date) => {
      offset = date.getTime() - Date.now();
    },
    advance: (ms) => {
      offset += ms;
    },
  };
}

/** The five services in this process and a console in front of them that signs with the test operators' key. */
export interface Stack {
  services: RunningServices;
  c: TestConsole;
  /** Clients acting as the test admin (a second test operator approves what needs four-eyes). */
  deposits: Client<typeof DepositService>;
  merchants: Client<typeof MerchantService>;
  bankCatalog: Client<typeof BankCatalogService>;
  payouts: Client<typeof PayoutService>;
  callbacks: Client<typeof CallbackService>;
  stop(): Promise<void>;
}

export async function startStack(options: { consoleEnv?: Record<string, string>; serviceEnv?: Record<string, string> } = {}): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "console-pages-"));
  const services = await startInProcess(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"], {
    env: { DATA_DIR: join(dir, "services"), LOG_LEVEL: "warn", MASTER_KEY: randomBytes(32).toString("hex"), PAYOUT_WORKER_INTERVAL: "50ms", SANDBOX_PAYOUT_DELAY: "10ms", ...options.serviceEnv },
    receivingAccounts: true,
  });
  const clock = liveClock();
  const running = await startConsole({
    // Both sides, as the all-in-one serves them: the merchant dashboard's tests use this stack too.
    env: { DATA_DIR: join(dir, "console"), CONSOLE_PORT: "0", LOG_LEVEL: "silent", CONSOLE_AUDIENCE: "both", ...TEST_WORKLOAD_ENV, ...options.consoleEnv },
    clock,
    transport: services.localTransport,
    assertionPrivateKey: TEST_OPERATOR_PRIVATE_KEY_PEM,
  });
  const privateKey = createPrivateKey(TEST_OPERATOR_PRIVATE_KEY_PEM);
  const c: TestConsole = { console: running, clock, privateKey, publicKey: createPublicKey(privateKey), url: running.url };
  const url = services.server.url;
  return {
    services,
    c,
    deposits: createServiceClient(DepositService, url),
    merchants: createServiceClient(MerchantService, url),
    bankCatalog: createServiceClient(BankCatalogService, url),
    payouts: createServiceClient(PayoutService, url),
    callbacks: createServiceClient(CallbackService, url),
    async stop() {
      await running.stop();
      await services.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One stack for a test file: started before its tests (then `ready`, the file's own fixtures, e.g.
 * `(s) => { stack = s; }`), stopped after them all, whatever failed. `test` is the file's own (this
 * module imports no ava: walk/serve.ts runs it outside ava).
 */
export function stackForTests(test: TestFn, ready: (stack: Stack) => void | Promise<void>, options: Parameters<typeof startStack>[0] = {}): void {
  let started: Stack | undefined;
  test.before(async () => {
    started = await startStack(options);
    await ready(started);
  });
  test.after.always(async () => {
    await started?.stop();
  });
}

export const PASSWORD = "correct horse battery staple";

/**
 * An account of `role` made through the console's admin API (approved by a second service admin
 * once an admin exists, as four-eyes asks) with its password set through the link.
 */
export async function operatorAccount(c: TestConsole, email: string, role: OperatorRole): Promise<void> {
  const created = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c, "bootstrap-bot"), body: { email, displayName: email.split("@")[0], role } });
  const set = await setPasswordThroughLink(c, await linkOf(c, created), PASSWORD);
  if (set.status !== 303) throw new Error(`set password of ${email}: ${set.status}`);
}

/** A new account of `role`, signed in through the page. */
export async function signedInAs(c: TestConsole, email: string, role: OperatorRole): Promise<Browser> {
  await operatorAccount(c, email, role);
  const { browser, status } = await signedInBrowser(c, email, PASSWORD);
  if (status !== 303) throw new Error(`sign-in of ${email}: ${status}`);
  return browser;
}

/** Posts a form of a page with the page's own CSRF token. */
export async function postFrom(browser: Browser, pagePath: string, action: string, form: Record<string, string>) {
  const page = await browser.get(pagePath);
  return browser.post(action, { _csrf: csrfOf(page.html), ...form });
}

let merchantCount = 0;
/** A merchant (live unless told) and a pending deposit of it, on an assigned receiving account. */
export async function merchantDeposit(stack: Stack, options: { sandbox?: boolean; amount?: bigint } = {}): Promise<Deposit> {
  const { merchant } = await stack.merchants.createMerchant({ name: `Page Shop ${++merchantCount}`, sandbox: options.sandbox ?? false });
  const { deposit } = await stack.deposits.createDeposit({ merchantId: merchant!.id, processId: `order-${merchantCount}`, amount: options.amount ?? 50_000n, customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

let btx = 0;
/** A transfer reported to the deposit's receiving account. */
export async function reportTo(stack: Stack, deposit: Deposit, amount: bigint, description: string, senderName = "AYSE YILMAZ") {
  const { transfer } = await stack.deposits.reportTransfer({ iban: deposit.assignedAccount!.iban, amount, senderName, reference: description, bankTransactionId: `PAGE-${Date.now()}-${++btx}`, senderIban: "TR330006100519786457841326" });
  return transfer!;
}

/** A sandbox deposit of 500.00 TRY and a transfer of `amount` (less) naming its reference: short, it waits in review. */
export async function shortTransfer(stack: Stack, amount = 49_000n) {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  return { deposit, short: await reportTo(stack, deposit, amount, `odeme ${deposit.reference}`) };
}

/**
 * A post the service made wait for a second operator: 303 to the page, which says so and links
 * the approval of `service`. The approval's id.
 */
export async function waitingApproval(t: ExecutionContext, stack: Stack, browser: Browser, res: { status: number; location: string | null }, service: string): Promise<string> {
  t.is(res.status, 303);
  const approvalId = new URL(res.location!, stack.c.url).searchParams.get("approval");
  t.truthy(approvalId);
  const shown = await browser.get(`${res.location!}&lang=en`);
  t.true(shown.html.includes("Waiting for a second operator"));
  t.true(shown.html.includes(`href="/approvals/${service}/${approvalId}"`));
  return approvalId!;
}

/** A new viewer's page of `path` (200), which links `href`. */
export async function viewerSees(t: ExecutionContext, stack: Stack, email: string, path: string, href: string) {
  const viewer = await signedInAs(stack.c, email, "viewer");
  const list = await viewer.get(path);
  t.is(list.status, 200);
  t.true(list.html.includes(`href="${href}"`));
  return { viewer, list };
}
