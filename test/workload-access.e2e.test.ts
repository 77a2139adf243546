import { createPublicKey } from "node:crypto";
import test from "ava";
import { create, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  createWorkloadSigner,
  generateWorkloadKey,
  isMutating,
  loadWorkloadKey,
  signedIdentity,
  spiffeId,
  AUDIT_TABLE,
  WORKLOAD_NAMES,
  type CallerIdentity,
  type WorkloadName,
} from "@payments/access";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, AuditService } from "@payments/contracts/operator";
import { PayoutService } from "@payments/contracts/payout";
import { errorInfo, systemClock, type Clock } from "@payments/kit";
import {
  createServiceClient,
  rejectionOf,
  TEST_TRUST_BUNDLE,
  testMerchantVoice,
  testWorkloadKeyPem,
  testWorkloadSigner,
  type TestClientOptions,
} from "@payments/testing";
import { everyRpc, SERVICE_NAMES, startSplitDeployment, type Rpc, type ServiceName, type SplitDeployment } from "@payments/testing/services";
import knexFactory, { type Knex } from "knex";

// Every caller known (issue 32), on the split deployment as it runs in production: each service
// its own process, database and identity, on MariaDB and JetStream. Every RPC of every service,
// walked from the descriptors, is called by every workload for itself, by the gateway for a
// merchant, and by callers that cannot prove who they are: none, a forged identity, another trust
// domain's, an expired one, a merchant's voice from a workload that is not the gateway. Each is
// allowed exactly as the table below says (written here, from the issue, not read from the
// services' own tables) and otherwise refused, with every table of every database unchanged.

const TOKEN = "workload-access-internal-token";
// The services run apart, on the real clock: so do the callers.
const clock = systemClock;
let split: SplitDeployment;
let admin: Knex;
let tables: string[];
let merchantId: string;

/** A key of another trust domain that the bundle holds: a domain this deployment does not trust, whatever the bundle says. */
const foreignKey = generateWorkloadKey();
const FOREIGN_GATEWAY = spiffeId("other.example", "gateway");

/**
 * Who may call each RPC for itself (no person behind it) and whether the gateway may call it for a
 * merchant. Every RPC of every service must be here: a new one is refused by this walk until its
 * callers are written down.
 */
type Callers = Record<string, Record<string, { workloads?: readonly WorkloadName[]; apiKey?: boolean }>>;
const CALLERS: Record<string, { workloads: readonly WorkloadName[]; apiKey: boolean }> = Object.fromEntries(
  Object.entries<Callers[string]>({
    "payments.merchant.v1.MerchantService": {
      GetCredentials: { workloads: ["gateway"] },
      GetCallbackTarget: { workloads: ["callback-sender"] },
      GetMerchant: { workloads: ["deposit", "payout"] },
    },
    "payments.bankcatalog.v1.BankCatalogService": {
      ListAvailableBanks: { apiKey: true },
      ListBanks: { workloads: ["gateway", "payout"] },
      ListReceivingAccounts: { workloads: ["deposit"] },
      GetDepositTerms: { workloads: ["deposit"] },
    },
    "payments.deposit.v1.DepositService": {
      CreateDeposit: { apiKey: true },
      GetDeposit: { apiKey: true },
      ListDeposits: { apiKey: true },
      CancelDeposit: { apiKey: true },
      SandboxPayDeposit: { apiKey: true },
      SandboxExpireDeposit: { apiKey: true },
      GetCheckout: { workloads: ["gateway"] },
      SimulatePayment: { workloads: ["gateway"] },
      ReportTransfer: { workloads: ["bank-integration"] },
      ImportStatement: { workloads: ["bank-integration"] },
      RaiseModeFence: { workloads: ["merchant"] },
      LowerModeFence: { workloads: ["merchant"] },
    },
    "payments.payout.v1.PayoutService": {
      CreateWithdrawal: { apiKey: true },
      GetWithdrawal: { apiKey: true },
      ListWithdrawals: { apiKey: true },
      CancelWithdrawal: { apiKey: true },
      GetBalances: { apiKey: true },
      GetStatement: { apiKey: true },
      RaiseModeFence: { workloads: ["merchant"] },
      LowerModeFence: { workloads: ["merchant"] },
    },
    "payments.callback.v1.CallbackService": {
      GetEvent: { apiKey: true },
      ListEvents: { apiKey: true },
      RedeliverEvent: { apiKey: true },
    },
  } satisfies Callers).flatMap(([service, methods]) =>
    Object.entries(methods).map(([m, c]) => [`${service}/${m}`, { workloads: c.workloads ?? [], apiKey: c.apiKey ?? false }]),
  ),
);

/** Every RPC of every service with the people-only RPCs any caller is refused without a person: the operators' and merchant users'. */
function expectedCallers(rpc: Rpc): { workloads: readonly WorkloadName[]; apiKey: boolean } {
  return CALLERS[`${rpc.service.typeName}/${rpc.method.name}`] ?? { workloads: [], apiKey: false };
}

test.before(async () => {
  // The bundle also holds a key of another trust domain, as a careless merge of two bundles would.
  const bundle = TEST_TRUST_BUNDLE.with([{ spiffeId: FOREIGN_GATEWAY, publicKey: createPublicKey(loadWorkloadKey(foreignKey.privateKeyPem)) }]);
  split = await startSplitDeployment({
    services: [...SERVICE_NAMES],
    token: TOKEN,
    receivingAccounts: true,
    common: { WORKLOAD_TRUST_BUNDLE: JSON.stringify(bundle.toJson()) },
    env: { merchant: { MASTER_KEY: "c".repeat(64) }, payout: { PAYOUT_WORKER: "0" }, "callback-sender": { LOG_LEVEL: "error" } },
  });
  const merchants = createServiceClient(MerchantService, split.url("merchant"), { token: TOKEN });
  merchantId = (await merchants.createMerchant({ name: "Walk Shop", sandbox: true })).merchant!.id;
  admin = knexFactory({ client: "mysql2", connection: { host: "127.0.0.1", port: 3306, user: "root", password: "" }, pool: { min: 1, max: 1 } });
  const rows = await admin<{ TABLE_SCHEMA: string; TABLE_NAME: string }>("information_schema.tables")
    .whereIn("TABLE_SCHEMA", Object.values(split.databases).map((d) => d.name))
    .andWhere("TABLE_TYPE", "BASE TABLE")
    .select("TABLE_SCHEMA", "TABLE_NAME");
  // The audit is a log of attempts (a refused call is recorded there); every other table must stay as it was.
  tables = rows.filter((r) => !r.TABLE_NAME.startsWith(AUDIT_TABLE)).map((r) => `\`${r.TABLE_SCHEMA}\`.\`${r.TABLE_NAME}\``).sort();
});

test.after.always(async () => {
  await (admin as Knex | undefined)?.destroy();
  await (split as SplitDeployment | undefined)?.stop();
});

async function checksums(): Promise<string> {
  const [rows] = (await admin.raw(`CHECKSUM TABLE ${tables.join(", ")}`)) as [Array<{ Table: string; Checksum: string | number | null }>];
  return rows.map((r) => `${r.Table}=${r.Checksum}`).join("\n");
}

/** A caller of the walk: how its calls name (or fail to name) themselves. */
interface Caller {
  name: string;
  options: Pick<TestClientOptions, "workload" | "merchant">;
  /** The workload it proves, when it proves one; undefined: it must be refused UNAUTHENTICATED everywhere. */
  proves?: WorkloadName;
  /** It speaks for a merchant (the gateway's voice). */
  speaksForMerchant?: boolean;
}

/** The signer of test workload `name` at another time: a token signed then has expired now. */
function signedAt(name: WorkloadName, at: Clock): CallerIdentity {
  return signedIdentity(createWorkloadSigner(spiffeId("payments.local", name), loadWorkloadKey(testWorkloadKeyPem(name)), at));
}

function callers(): Caller[] {
  const now = clock.now().getTime();
  return [
    ...WORKLOAD_NAMES.map((name): Caller => ({ name, options: { workload: name }, proves: name })),
    { name: "bank-integration/test-bank", options: { workload: "bank-integration/test-bank" }, proves: "bank-integration" },
    { name: "gateway for a merchant", options: { workload: "gateway" }, proves: "gateway", speaksForMerchant: true },
    { name: "nobody", options: { workload: null } },
    // Signed with a key the bundle does not hold, naming the gateway.
    { name: "a forged gateway", options: { workload: signedIdentity(createWorkloadSigner(spiffeId("payments.local", "gateway"), loadWorkloadKey(generateWorkloadKey().privateKeyPem), clock)) } },
    // The deposit service's real key, naming the gateway: the bundle binds that key to the deposit service.
    { name: "the deposit's key calling itself the gateway", options: { workload: signedIdentity(createWorkloadSigner(spiffeId("payments.local", "gateway"), loadWorkloadKey(testWorkloadKeyPem("deposit")), clock)) } },
    { name: "another trust domain's gateway", options: { workload: signedIdentity(createWorkloadSigner(FOREIGN_GATEWAY, loadWorkloadKey(foreignKey.privateKeyPem), clock)) } },
    { name: "an expired gateway assertion", options: { workload: signedAt("gateway", { now: () => new Date(now - 5 * 60_000) }) } },
  ];
}

type Outcome = "allowed" | "unauthenticated" | "denied";

function outcomeOf(err: unknown): Outcome {
  if (err === undefined) return "allowed";
  const info = errorInfo(err);
  if (info.code === Code.Unauthenticated) return "unauthenticated";
  if (info.code === Code.PermissionDenied && (info.reason === "PERMISSION_DENIED" || info.reason === undefined)) return "denied";
  return "allowed";
}

/** The module's shared services too (audit, approvals): people's alone. */
function everyCall(): Array<Rpc & { hosted?: string }> {
  const shared = (module: ServiceName, service: DescService) => service.methods.map((method) => ({ module, service, method, hosted: module }));
  return [...everyRpc(), ...SERVICE_NAMES.flatMap((m) => [...shared(m, AuditService), ...shared(m, ApprovalService)])];
}

test.serial("every RPC of every service × every caller: allowed exactly as its table says, otherwise refused with every table unchanged", async (t) => {
  const rpcs = everyCall();
  const missing = everyRpc().filter((r) => !(`${r.service.typeName}/${r.method.name}` in CALLERS) && !isPeopleOnly(r.method));
  t.deepEqual(missing.map((r) => `${r.service.typeName}/${r.method.name}`), [], "RPCs this walk does not know the callers of (add them to CALLERS, or to PEOPLE_ONLY)");
  let refused = 0;
  for (const caller of callers()) {
    for (const rpc of rpcs) {
      const name = `${caller.name} → ${rpc.service.typeName}/${rpc.method.name}`;
      const expected = "hosted" in rpc ? { workloads: [], apiKey: false } : expectedCallers(rpc);
      const allowed = caller.proves !== undefined && (caller.speaksForMerchant ? expected.apiKey : expected.workloads.includes(caller.proves));
      const before = allowed || !isMutating(rpc.method) ? undefined : await checksums();
      const voice = caller.speaksForMerchant ? { merchant: testMerchantVoice(merchantId) } : {};
      const client = createServiceClient(rpc.service, split.url(rpc.module), { token: TOKEN, operator: null, approver: null, clock, ...caller.options, ...voice, ...("hosted" in rpc ? { service: rpc.hosted } : {}) }) as unknown as Record<string, (m: unknown) => Promise<unknown>>;
      const outcome = await client[rpc.method.localName]!(create(rpc.method.input)).then(
        () => outcomeOf(undefined),
        (err: unknown) => outcomeOf(err),
      );
      if (allowed) {
        t.is(outcome, "allowed", name);
        continue;
      }
      refused++;
      if (caller.proves === undefined) t.is(outcome, "unauthenticated", `${name}: it proves no workload`);
      else t.not(outcome, "allowed", name);
      if (before !== undefined) t.is(await checksums(), before, `${name} changed nothing`);
    }
  }
  t.log(`${callers().length} callers × ${rpcs.length} RPCs, ${refused} refused`);
});

/** RPCs no workload calls for itself: people's (an operator's, a merchant user's) alone. */
function isPeopleOnly(method: DescMethod): boolean {
  return PEOPLE_ONLY.has(method.name);
}
const PEOPLE_ONLY = new Set([
  "CreateMerchant", "ListMerchants", "RotateSecret", "RotateWebhookSecret", "RevokeSecret", "SetWithdrawalApproval", "SetAllowedIps", "SetCallbackUrl", "SetDisplayName", "SetStatus", "SetSandbox", "SetRateLimit", "SetPaymentRules", "CreateApiKey", "ListApiKeys", "RevokeApiKey", "SetApiKeyTrusted",
  "CreateBank", "UpdateBank", "GetFastSettings", "UpdateFastSettings", "SetMerchantLimit", "ClearMerchantLimit", "ListMerchantLimits", "CreateReceivingAccount", "UpdateReceivingAccount", "SeedSandboxAccounts",
  "SummarizeDeposits", "ConfirmDeposit", "RejectDeposit", "ListUnmatchedTransfers", "GetTransfer", "ResolveTransfer", "GetReconciliation",
  "SummarizeWithdrawals", "CompleteWithdrawal", "FailWithdrawal", "ListLedgerEntries", "AdjustBalance", "CreateTransferReturn", "CompleteTransferReturn", "FailTransferReturn", "ListTransferReturns", "CheckLedger", "ListWithheldCredits", "ResolveWithheldCredit", "ListWithdrawalApprovals", "ApproveWithdrawal", "RejectWithdrawal",
  "RedeliverFailedEvents", "SendTestEvent",
]);

// ---------------------------------------------------------------------------------------- the cases of the issue

test.serial("a made-up bank report (ReportTransfer) from anyone but a bank integration or an operator completes nothing and credits nothing", async (t) => {
  const deposits = (options: TestClientOptions) => createServiceClient(DepositService, split.url("deposit"), { token: TOKEN, clock, ...options });
  const deposit = (await deposits({ operator: null, workload: "gateway", merchant: merchantId }).createDeposit({ merchantId, processId: `walk-${Date.now()}`, amount: 2_000_000n, customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } })).deposit!;
  const report = { iban: deposit.assignedAccount!.iban, amount: deposit.amount, currency: "TRY", senderName: "AYSE YILMAZ", description: deposit.reference, bankTransactionId: `made-up-${Date.now()}` };
  const before = await checksums();
  // The customer's own name, the right amount and reference: everything but the bank's word. Nothing
  // but the shared token; then workloads that are no bank; then the gateway for the merchant.
  t.like(await rejectionOf(deposits({ operator: null, workload: null }).reportTransfer(report)), { code: Code.Unauthenticated });
  for (const workload of ["gateway", "console", "payout", "callback-sender", "merchant"] as const) {
    t.like(await rejectionOf(deposits({ operator: null, workload }).reportTransfer(report)), { code: workload === "console" ? Code.Unauthenticated : Code.PermissionDenied }, workload);
  }
  t.like(await rejectionOf(deposits({ operator: null, workload: "gateway", merchant: merchantId }).reportTransfer(report)), { code: Code.PermissionDenied });
  t.is(await checksums(), before, "no transfer, no completion, no credit");
  const still = (await deposits({ operator: null, workload: "gateway", merchant: merchantId }).getDeposit({ merchantId, key: { case: "depositId", value: deposit.id } })).deposit!;
  t.is(still.status, DepositStatus.PENDING);
  // A bank integration's report is the bank's word.
  const done = await deposits({ operator: null, workload: "bank-integration/test-bank" }).reportTransfer(report);
  t.is(done.deposit?.status, DepositStatus.COMPLETED);
});

test.serial("the secrets that sign callbacks (GetCallbackTarget) are the callback-sender's alone: not the gateway's, not an admin's", async (t) => {
  const merchants = (options: TestClientOptions) => createServiceClient(MerchantService, split.url("merchant"), { token: TOKEN, clock, ...options });
  t.like(await rejectionOf(merchants({ operator: null, workload: "gateway" }).getCallbackTarget({ merchantId })), { code: Code.PermissionDenied });
  t.like(await rejectionOf(merchants({ operator: null, workload: "gateway", merchant: merchantId }).getCallbackTarget({ merchantId })), { code: Code.PermissionDenied });
  t.like(await rejectionOf(merchants({ operator: null, workload: null }).getCallbackTarget({ merchantId })), { code: Code.Unauthenticated });
  // An admin, through the console: an operator role opens no secret.
  t.like(await rejectionOf(merchants({}).getCallbackTarget({ merchantId })), { code: Code.PermissionDenied });
  const target = await merchants({ operator: null, workload: "callback-sender" }).getCallbackTarget({ merchantId });
  t.regex(target.signingSecret, /^sk_/);
  // Every read of it is in the merchant service's audit, with who read it.
  const { records } = await createServiceClient(AuditService, split.url("merchant"), { token: TOKEN, clock, service: "merchant" }).listAuditRecords({ targetId: merchantId, limit: 50 });
  t.true(records.some((r) => r.rpc.endsWith("/GetCallbackTarget") && r.outcome === "ok" && r.workload === "spiffe://payments.local/callback-sender"), "the read is audited");
  t.true(records.some((r) => r.rpc.endsWith("/GetCallbackTarget") && r.outcome === "PERMISSION_DENIED" && r.workload === "spiffe://payments.local/gateway"), "the refusal is audited");
});

test.serial("a withdrawal (CreateWithdrawal) is made only by the gateway for the merchant or by the console for a person: not by a bank integration, another service, the CLI's operator, or with a merchant's voice from anyone but the gateway", async (t) => {
  const payouts = (options: TestClientOptions) => createServiceClient(PayoutService, split.url("payout"), { token: TOKEN, clock, ...options });
  const request = { merchantId, processId: `walk-w-${Date.now()}`, amount: 1_000n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" };
  const before = await checksums();
  for (const workload of ["bank-integration/test-bank", "deposit", "merchant", "callback-sender"] as const) {
    t.like(await rejectionOf(payouts({ operator: null, workload }).createWithdrawal(request)), { code: Code.PermissionDenied }, workload);
  }
  t.like(await rejectionOf(payouts({ operator: null, workload: null }).createWithdrawal(request)), { code: Code.Unauthenticated });
  // An operator through the CLI: withdrawals are the console's (for a person) and the gateway's (for a merchant).
  t.like(await rejectionOf(payouts({ workload: "cli" }).createWithdrawal(request)), { code: Code.PermissionDenied });
  // A merchant's voice in an assertion that is not the gateway's is refused outright.
  const bankSpeaking = testWorkloadSigner("bank-integration/test-bank", clock);
  const forgedVoice: CallerIdentity = { id: bankSpeaking.id, headerFor: (audience) => bankSpeaking.tokenFor(audience, testMerchantVoice(merchantId)) };
  t.like(await rejectionOf(payouts({ operator: null, workload: forgedVoice }).createWithdrawal(request)), { code: Code.Unauthenticated });
  t.is(await checksums(), before, "nothing held, nothing made");
});

test.serial("INTERNAL_API_TOKEN alone grants nothing: every RPC refuses a caller that has the token and no identity", async (t) => {
  const before = await checksums();
  for (const rpc of everyRpc()) {
    const client = createServiceClient(rpc.service, split.url(rpc.module), { token: TOKEN, operator: null, workload: null }) as unknown as Record<string, (m: unknown) => Promise<unknown>>;
    const info = await client[rpc.method.localName]!(create(rpc.method.input)).then(
      () => undefined,
      (err: unknown) => errorInfo(err),
    );
    t.is(info?.code, Code.Unauthenticated, `${rpc.service.typeName}/${rpc.method.name}`);
  }
  t.is(await checksums(), before);
});
