import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { PayoutService } from "@payments/contracts/payout";
import { type RunningServices } from "@payments/kit";
import { createServiceClient } from "@payments/testing";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { cli, singleJson } from "./capture.js";

// Four-eyes through the CLI: `approval list|show|approve|reject` and `audit list`, in-process
// against the real merchant, bank-catalog and payout services (all-in-one on SQLite in a
// temporary directory). A balance adjustment of a live merchant is live money moved by hand: the
// payout service stores it as a pending approval, which its maker cannot approve, a viewer may
// not, and another finance operator approves (it runs once) or rejects (nothing runs). Serial:
// each test continues the operators' day.

const MAKER = "maker@example.com";
const CHECKER = "checker@example.com";

interface ApprovalJson {
  id: string;
  service: string;
  rpc: string;
  summary: string;
  reason: string;
  maker: string;
  makerRole: string;
  status: string;
  decidedBy?: string;
  decisionNote?: string;
  outcome?: string;
  requestJson: string;
  responseJson?: string;
  targetIds?: string[];
}

interface AuditJson {
  actor: string;
  role: string;
  rpc: string;
  targetIds?: string[];
  reason?: string;
  outcome: string;
  approvalId?: string;
  service: string;
  maker?: string;
}

let running: RunningServices | undefined;
let dataDir: string | undefined;
let url: string;
let merchantId: string;
let approvedId: string;
let rejectedId: string;

const as = (operator: string, args: readonly string[], env: Record<string, string> = {}) => cli([...args, "--grpc-url", url], { PAYMENTS_OPERATOR: operator, ...env });

async function available(): Promise<bigint> {
  const { balances } = await createServiceClient(PayoutService, url, { operator: null, merchant: merchantId }).getBalances({ merchantId });
  return balances.find((b) => b.currency === "TRY")?.available ?? 0n;
}

/** Asks for a live adjustment as MAKER: refused with APPROVAL_REQUIRED; the approval's id. */
async function askAdjustment(amount: number, reason: string): Promise<string> {
  const r = await as(MAKER, ["balance", "adjust", "--merchant", merchantId, "--amount", String(amount), "--reason", reason]);
  if (r.code !== 1 || !r.stderr.startsWith("error: APPROVAL_REQUIRED: ")) throw new Error(`expected APPROVAL_REQUIRED, got ${r.code}: ${r.stderr}${r.stdout}`);
  const id = /"approvalId":"(apr_[^"]+)"/.exec(r.stderr)?.[1];
  if (!id) throw new Error(`no approval id in ${r.stderr}`);
  return id;
}

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-approval-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "payout"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: "cd".repeat(32), LOG_LEVEL: "warn", SHUTDOWN_GRACE: "1s" },
  });
  url = running.server.url;
  // A live merchant: made by two admins (its creation is four-eyes too), the second shown its secrets.
  const asked = await as(MAKER, ["merchant", "create", "--name", "Live Shop", "--json"]);
  const creation = /"approvalId":"(apr_[^"]+)"/.exec(asked.stderr)?.[1];
  if (asked.code !== 1 || !creation) throw new Error(`expected APPROVAL_REQUIRED, got ${asked.code}: ${asked.stderr}`);
  const created = await as(CHECKER, ["approval", "approve", creation, "--json"]);
  if (created.code !== 0) throw new Error(created.stderr);
  merchantId = (singleJson(created.stdout) as { merchant: { merchantId: string } }).merchant.merchantId;
});

test.after.always(async () => {
  await running?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test.serial("a live balance adjustment waits as a pending approval that list and show describe, and changes nothing yet", async (t) => {
  approvedId = await askAdjustment(50_000, "opening float");
  t.is(await available(), 0n, "nothing is posted before a second operator approves");

  const listed = await as(CHECKER, ["approval", "list", "--status", "pending", "--json"]);
  t.is(listed.code, 0, listed.stderr);
  const { approvals } = singleJson(listed.stdout) as { approvals: ApprovalJson[] };
  t.is(approvals.length, 1);
  t.like(approvals[0], { id: approvedId, service: "payout", rpc: "payments.payout.v1.PayoutService/AdjustBalance", maker: MAKER, makerRole: "admin", reason: "opening float", status: "APPROVAL_STATUS_PENDING" });
  t.regex(approvals[0]!.summary, new RegExp(`adjust the balance of live merchant ${merchantId} by 500\\.00 TRY`));
  t.like(JSON.parse(approvals[0]!.requestJson), { merchantId, reason: "opening float" });

  const human = await as(CHECKER, ["approval", "list", "--service", "payout"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^ID +STATUS +SERVICE +ASKED BY +ASKED AT +WHAT\n/);
  t.regex(human.stdout, new RegExp(`${approvedId} +pending +payout +${MAKER} .* adjust the balance of live merchant ${merchantId}`));
  t.is((await as(CHECKER, ["approval", "list", "--status", "approved", "--service", "payout"])).stdout, "No approvals.\n");

  const shown = await as(CHECKER, ["approval", "show", approvedId]);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, new RegExp(`id +${approvedId}\n`));
  t.regex(shown.stdout, /status +pending\n/);
  t.regex(shown.stdout, new RegExp(`asked by +${MAKER} \\(admin\\)\n`));
  t.regex(shown.stdout, /why +opening float\n/);
  t.regex(shown.stdout, /service +payout \(payments\.payout\.v1\.PayoutService\/AdjustBalance\)\n/);
  const shownJson = await as(CHECKER, ["approval", "show", approvedId, "--json"]);
  t.like(singleJson(shownJson.stdout), { id: approvedId, status: "APPROVAL_STATUS_PENDING" });

  const unknown = await as(CHECKER, ["approval", "show", "apr_nope"]);
  t.is(unknown.code, 1);
  t.is(unknown.stderr, "error: no approval apr_nope in any service\n");
});

test.serial("the maker cannot approve their own request, nor a viewer anyone's; another finance operator approves and it runs once", async (t) => {
  const own = await as(MAKER, ["approval", "approve", approvedId]);
  t.is(own.code, 1);
  t.regex(own.stderr, /^error: MAKER_CANNOT_APPROVE: the operator who asked for it cannot approve it/);
  const viewer = await as("viewer@example.com", ["approval", "approve", approvedId], { PAYMENTS_OPERATOR_ROLE: "viewer" });
  t.is(viewer.code, 1);
  t.regex(viewer.stderr, /^error: PERMISSION_DENIED: approving payments\.payout\.v1\.PayoutService\/AdjustBalance needs the finance role/);
  t.is(await available(), 0n);

  const approved = await as(CHECKER, ["approval", "approve", approvedId, "--note", "float agreed with the bank"]);
  t.is(approved.code, 0, approved.stderr);
  t.true(approved.stdout.startsWith(`Approved and done: adjust the balance of live merchant ${merchantId} by 500.00 TRY.\n`), approved.stdout);
  t.regex(approved.stdout, new RegExp(`decided by +${CHECKER}\n`));
  t.regex(approved.stdout, /note +float agreed with the bank\n/);
  t.regex(approved.stdout, /outcome +ok\n/);
  t.is(await available(), 50_000n);

  const again = await as("third@example.com", ["approval", "approve", approvedId, "--json"]);
  t.is(again.code, 1);
  t.regex(again.stderr, /^error: APPROVAL_NOT_PENDING: approval \S+ is approved, not pending/);
  t.is(await available(), 50_000n, "an approval runs once");

  const listed = singleJson((await as(CHECKER, ["approval", "list", "--status", "approved", "--json"])).stdout) as { approvals: ApprovalJson[] };
  t.like(listed.approvals[0], { id: approvedId, status: "APPROVAL_STATUS_APPROVED", decidedBy: CHECKER, outcome: "ok" });
  t.like(JSON.parse(listed.approvals[0]!.responseJson ?? "{}"), { balance: { currency: "TRY", available: "50000" } });
});

test.serial("reject needs a reason; a rejected request never runs and cannot be approved later", async (t) => {
  rejectedId = await askAdjustment(-20_000, "fee taken twice");
  const noReason = await as(CHECKER, ["approval", "reject", rejectedId]);
  t.is(noReason.code, 2, noReason.stderr);

  const rejected = await as(CHECKER, ["approval", "reject", rejectedId, "--reason", "the fee was taken once"]);
  t.is(rejected.code, 0, rejected.stderr);
  t.true(rejected.stdout.startsWith(`Rejected: adjust the balance of live merchant ${merchantId} by -200.00 TRY.\n`), rejected.stdout);
  t.regex(rejected.stdout, /status +rejected\n/);
  t.regex(rejected.stdout, /note +the fee was taken once\n/);

  const late = await as("third@example.com", ["approval", "approve", rejectedId]);
  t.is(late.code, 1);
  t.regex(late.stderr, /^error: APPROVAL_NOT_PENDING: approval \S+ is rejected, not pending/);
  t.is(await available(), 50_000n, "the rejected adjustment never ran");
  const listed = singleJson((await as(CHECKER, ["approval", "list", "--status", "rejected", "--json"])).stdout) as { approvals: ApprovalJson[] };
  t.deepEqual(
    listed.approvals.map((a) => [a.id, a.decidedBy, a.decisionNote]),
    [[rejectedId, CHECKER, "the fee was taken once"]],
  );
});

test.serial("audit list shows the maker's request, the checker's approval and the approved run as both, newest first", async (t) => {
  const r = await as(CHECKER, ["audit", "list", "--service", "payout", "--target", approvedId, "--json"]);
  t.is(r.code, 0, r.stderr);
  const { records } = singleJson(r.stdout) as { records: AuditJson[] };
  const approve = records.find((x) => x.rpc === "payments.operator.v1.ApprovalService/Approve" && x.outcome === "ok");
  t.like(approve, { actor: CHECKER, maker: MAKER, approvalId: approvedId, service: "payout", reason: "float agreed with the bank" });
  const refused = records.filter((x) => x.rpc === "payments.operator.v1.ApprovalService/Approve" && x.outcome !== "ok").map((x) => [x.actor, x.outcome]);
  t.deepEqual(refused.sort(), [
    ["maker@example.com", "MAKER_CANNOT_APPROVE"],
    ["third@example.com", "APPROVAL_NOT_PENDING"],
    ["viewer@example.com", "PERMISSION_DENIED"],
  ]);

  const byMerchant = singleJson((await as(CHECKER, ["audit", "list", "--target", merchantId, "--json"])).stdout) as { records: AuditJson[] };
  const adjustments = byMerchant.records.filter((x) => x.rpc === "payments.payout.v1.PayoutService/AdjustBalance");
  // Newest first: the rejected one's request, the approved run, the first request.
  t.deepEqual(
    adjustments.map((x) => [x.actor, x.outcome, x.maker ?? "", x.approvalId ?? ""]),
    [
      [MAKER, "APPROVAL_REQUIRED", "", rejectedId],
      [CHECKER, "ok", MAKER, approvedId],
      [MAKER, "APPROVAL_REQUIRED", "", approvedId],
    ],
  );
  // The live merchant's creation: the checker's approved run of the maker's request, found by the id it made.
  t.true(byMerchant.records.some((x) => x.rpc === "payments.merchant.v1.MerchantService/CreateMerchant" && x.actor === CHECKER && x.maker === MAKER && x.service === "merchant"), "audit list reads every service");

  const human = await as(CHECKER, ["audit", "list", "--actor", CHECKER, "--service", "payout"]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^AT +ACTOR +ROLE +SERVICE +RPC +TARGETS +OUTCOME +REASON\n/);
  t.regex(human.stdout, new RegExp(`${CHECKER} \\(approving ${MAKER}\\) +admin +payout +AdjustBalance +${merchantId},led_\\S+ +ok +opening float\n`));
  t.regex(human.stdout, new RegExp(`${CHECKER} \\(approving ${MAKER}\\) +admin +payout +Reject +${rejectedId},${merchantId} +ok +the fee was taken once\n`));
});

test.serial("an approved request that fails when run is recorded with its reason, and approve exits 1 saying so", async (t) => {
  const id = await askAdjustment(-9_000_000, "take out more than there is");
  const r = await as(CHECKER, ["approval", "approve", id, "--json"]);
  t.is(r.code, 1);
  t.like(singleJson(r.stdout), { id, status: "APPROVAL_STATUS_APPROVED", decidedBy: CHECKER, outcome: "INSUFFICIENT_BALANCE" });
  t.regex(r.stderr, /^error: INSUFFICIENT_BALANCE: the approved request failed when run \(.+\)\n$/);
  t.is(await available(), 50_000n, "nothing was taken out");
});

test.serial("without any operator key the CLI's call is refused UNAUTHENTICATED, and the error says how the CLI signs", async (t) => {
  const r = await cli(["merchant", "create", "--name", "Nobody's", "--grpc-url", url], { OPERATOR_ASSERTION_PRIVATE_KEY: undefined, PAYMENTS_OPERATOR: "nobody", DATA_DIR: dataDir });
  t.is(r.code, 1);
  t.regex(r.stderr, /^error: UNAUTHENTICATED: CreateMerchant is an operator's action: it needs a signed operator assertion/);
  t.regex(r.stderr, /PAYMENTS_OPERATOR_TOKEN .*OPERATOR_ASSERTION_PRIVATE_KEY.*operator-admin\.key/);
  t.notRegex(r.stderr, /INTERNAL_API_TOKEN/, "the internal token is not what is missing");
});
