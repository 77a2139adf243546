import test from "ava";
import { randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { errorInfo, type BaseContext, type RunningServices, type ServiceModule } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, manualClock, rejectionOf, type TestDatabase, turkishIban, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { Knex } from "knex";
import { merchantModule } from "../src/index.js";

// Issue 21: the sandbox/live switch is fenced. While a merchant switches, the deposit and
// payout services refuse its deposits and withdrawals (MERCHANT_MODE_CHANGING); a creation
// racing a switch either lands before it (and the switch is refused) or is refused, never
// under the wrong kind. MariaDB, the four services in one process (all-in-one shape, each
// with its own database); a second merchant service of its own for the unreachable peer.

const clock = manualClock();
let database: TestDatabase | undefined;
let running: RunningServices | undefined;
const masterKey = randomBytes(32).toString("hex");

test.before(async () => {
  database = await createTestDatabase();
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATABASE_URL: database.url, MASTER_KEY: masterKey, LOG_LEVEL: "fatal", PAYOUT_WORKER: "0" },
    clock,
    receivingAccounts: true,
  });
});

test.after.always(async () => {
  await running?.stop();
  await database?.drop();
});

const url = () => running!.server.url;
const merchants = () => createServiceClient(MerchantService, url());
/** The fences are the merchant service's alone to raise and lower: these calls are made as it makes them. */
const fences = { deposits: () => createServiceClient(DepositService, url(), { operator: null, workload: "merchant" }), payouts: () => createServiceClient(PayoutService, url(), { operator: null, workload: "merchant" }) };
const deposits = () => createServiceClient(DepositService, url());
const payouts = () => createServiceClient(PayoutService, url());
const dbOf = (service: string): Knex => running!.contexts.get(service)!.db;

async function newMerchant(sandbox = false): Promise<string> {
  const created = await merchants().createMerchant({ name: `Fence Shop ${randomBytes(3).toString("hex")}`, allowedIps: [], callbackUrl: "", sandbox });
  return created.merchant!.id;
}

function createDeposit(merchantId: string, processId: string, amount = 10_000n) {
  return deposits().createDeposit({ merchantId, processId, amount, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
}

let ibans = 0;
function createWithdrawal(merchantId: string, processId: string, amount = 1_000n) {
  return payouts().createWithdrawal({
    merchantId,
    processId,
    amount,
    accountName: "Ayşe Yılmaz",
    iban: turkishIban(`00010000000000${String(++ibans).padStart(8, "0")}`),
    userId: "u",
    userName: "ayse",
    name: "Ayşe Yılmaz",
  });
}

const depositRows = (merchantId: string) => dbOf("deposit")("deposits").where({ merchant_id: merchantId }).select<Array<{ id: string; sandbox: number | boolean }>>("id", "sandbox");
const withdrawalRows = (merchantId: string) => dbOf("payout")("withdrawals").where({ merchant_id: merchantId }).select<Array<{ id: string; sandbox: number | boolean }>>("id", "sandbox");

test.serial("a deposit or withdrawal asked for while a fence stands is refused and changes nothing; lowered, it goes through", async (t) => {
  const merchantId = await newMerchant();
  await payouts().adjustBalance({ merchantId, amount: 50_000n, reason: "opening credit" });
  const fenceId = "fence_test_standing";
  const raisedDeposit = await fences.deposits().raiseModeFence({ merchantId, fenceId, ttlMs: 10_000 });
  const raisedPayout = await fences.payouts().raiseModeFence({ merchantId, fenceId, ttlMs: 10_000 });
  t.is(raisedDeposit.blocker, "", "no deposits yet");
  t.regex(raisedPayout.blocker, /TRY balance is not zero/);

  const refusedDeposit = await rejectionOf(createDeposit(merchantId, "fenced-1"));
  t.is(refusedDeposit.code, Code.FailedPrecondition);
  t.is(refusedDeposit.reason, "MERCHANT_MODE_CHANGING");
  const refusedWithdrawal = await rejectionOf(createWithdrawal(merchantId, "fenced-w1"));
  t.is(refusedWithdrawal.reason, "MERCHANT_MODE_CHANGING");
  t.deepEqual(await depositRows(merchantId), [], "no deposit stored");
  t.deepEqual(await withdrawalRows(merchantId), [], "no withdrawal stored");
  const balances = await payouts().getBalances({ merchantId });
  t.is(balances.balances[0]!.available, 50_000n, "nothing held");
  t.is(balances.balances[0]!.held, 0n);

  // Another switch's fence is refused while this one stands; this one's again renews it.
  t.is((await rejectionOf(fences.deposits().raiseModeFence({ merchantId, fenceId: "fence_other", ttlMs: 10_000 }))).reason, "MERCHANT_MODE_CHANGING");
  await fences.deposits().raiseModeFence({ merchantId, fenceId, ttlMs: 10_000 });

  t.true((await fences.deposits().lowerModeFence({ merchantId, fenceId: "fence_other", sandbox: false })).lowered === false, "another fence id lowers nothing");
  t.true((await fences.deposits().lowerModeFence({ merchantId, fenceId, sandbox: false })).lowered);
  t.true((await fences.payouts().lowerModeFence({ merchantId, fenceId, sandbox: false })).lowered);
  const deposit = await createDeposit(merchantId, "after-1");
  t.false(deposit.deposit!.sandbox);
  const withdrawal = await createWithdrawal(merchantId, "after-w1");
  t.false(withdrawal.withdrawal!.sandbox);
});

test.serial("a fence that expired (the merchant service died mid-switch) no longer blocks", async (t) => {
  const merchantId = await newMerchant();
  await payouts().adjustBalance({ merchantId, amount: 50_000n, reason: "opening credit" });
  await fences.deposits().raiseModeFence({ merchantId, fenceId: "fence_test_expiring", ttlMs: 5_000 });
  await fences.payouts().raiseModeFence({ merchantId, fenceId: "fence_test_expiring", ttlMs: 5_000 });
  clock.advance(4_999);
  t.is((await rejectionOf(createDeposit(merchantId, "expiring-1"))).reason, "MERCHANT_MODE_CHANGING", "1 ms before it expires");
  t.is((await rejectionOf(createWithdrawal(merchantId, "expiring-w1"))).reason, "MERCHANT_MODE_CHANGING");
  clock.advance(1);
  // Never lowered: the creations ask the merchant service afresh, and go through.
  t.false((await createDeposit(merchantId, "expired-1")).deposit!.sandbox);
  t.false((await createWithdrawal(merchantId, "expired-w1")).withdrawal!.sandbox);
});

test.serial("a replica's cached kind, stale after a switch, is asked afresh: the deposit takes the kind the merchant has", async (t) => {
  const merchantId = await newMerchant(false);
  // The switch to sandbox as the fences see it, while this replica's cache (filled below,
  // after the lowering dropped it) still says live: the MerchantChanged event has not come.
  await fences.deposits().raiseModeFence({ merchantId, fenceId: "fence_test_stale", ttlMs: 10_000 });
  await fences.deposits().lowerModeFence({ merchantId, fenceId: "fence_test_stale", sandbox: true });
  const warm = await rejectionOf(createDeposit(merchantId, "warm", 1n));
  t.is(warm.reason, "AMOUNT_OUT_OF_RANGE", "the refused deposit filled the cache with the merchant as live");
  await dbOf("merchant")("merchants").where({ id: merchantId }).update({ sandbox: true });

  const deposit = await createDeposit(merchantId, "stale-1");
  t.true(deposit.deposit!.sandbox, "sandbox, as the merchant now is, not live as the cache said");
  t.deepEqual(
    (await depositRows(merchantId)).map((r) => Boolean(r.sandbox)),
    [true],
  );
});

test("creations racing switches never land under the wrong kind: each lands before the switch (which is then refused) or after it, or is refused MERCHANT_MODE_CHANGING", async (t) => {
  let switched = 0;
  let refusedSwitches = 0;
  let refusedCreates = 0;
  // When the switch and the first creation start (ms), per round: creations before, around and after the switch.
  const timings = [
    [0, 0],
    [0, 3],
    [0, 6],
    [0, 10],
    [5, 0],
    [10, 0],
    [0, 15],
    [2, 4],
  ] as const;
  for (let round = 0; round < timings.length; round++) {
    const [switchAt, createsFrom] = timings[round]!;
    const merchantId = await newMerchant(round % 2 === 1);
    const before = round % 2 === 1;
    // The deposit service's cache holds the merchant's kind before the race starts.
    await rejectionOf(createDeposit(merchantId, "warm", 1n));
    const creates = Array.from({ length: 12 }, (_, i) =>
      new Promise((resolve) => setTimeout(resolve, createsFrom + i * 3)).then(() =>
        (i % 3 === 2 ? createWithdrawal(merchantId, `race-w${i}`) : createDeposit(merchantId, `race-${i}`)).then(
          () => ({ ok: true as const }),
          (err: unknown) => ({ ok: false as const, reason: errorInfo(err).reason }),
        ),
      ),
    );
    const switching = new Promise((resolve) => setTimeout(resolve, switchAt)).then(() =>
      merchants()
        .setSandbox({ merchantId, sandbox: !before })
        .then(
          () => "switched",
          (err: unknown) => errorInfo(err).reason,
        ),
    );
    const [outcomes, switchOutcome] = await Promise.all([Promise.all(creates), switching]);
    const after = (await merchants().getMerchant({ merchantId })).merchant!.sandbox;
    const stored = await depositRows(merchantId);
    if (switchOutcome === "switched") {
      switched++;
      t.is(after, !before);
      // Nothing stored before the switch (it would have refused): everything stored is of the new kind.
      t.true(
        stored.every((r) => Boolean(r.sandbox) === after),
        `round ${round}: every deposit of the new kind`,
      );
    } else {
      refusedSwitches++;
      t.is(switchOutcome, "SANDBOX_CHANGE_REFUSED", `round ${round}: the switch is refused only for transactions`);
      t.is(after, before);
      t.true(stored.length > 0, `round ${round}: refused because a deposit landed first`);
      t.true(
        stored.every((r) => Boolean(r.sandbox) === before),
        `round ${round}: every deposit of the kind it kept`,
      );
    }
    // Withdrawals: the merchant has no balance (a balance would block the switch), so none is stored either way.
    t.deepEqual(await withdrawalRows(merchantId), []);
    for (const o of outcomes) {
      if (o.ok) continue;
      t.true(["MERCHANT_MODE_CHANGING", "INSUFFICIENT_BALANCE"].includes(o.reason ?? ""), `round ${round}: refused ${o.reason}`);
      if (o.reason === "MERCHANT_MODE_CHANGING") refusedCreates++;
    }
    t.is(outcomes.filter((o) => o.ok).length, stored.length, `round ${round}: every deposit answered 201 is stored, and only those`);
  }
  t.log(`switches made ${switched}, refused ${refusedSwitches}; creations refused MERCHANT_MODE_CHANGING ${refusedCreates}`);
});

test.serial("a switch whose peer cannot be reached fails cleanly: nothing flipped, the fences raised are lowered", async (t) => {
  // A merchant service of its own (its own database), whose payout service is not there.
  const own = await createTestDatabase();
  t.teardown(() => own.drop());
  const lonely = await startServices([merchantModule], {
    mode: "split",
    clock,
    env: { ...TEST_OPERATOR_ENV, DATABASE_URL: own.url, MASTER_KEY: masterKey, GRPC_PORT: "0", LOG_LEVEL: "fatal", DEPOSIT_SERVICE_URL: url(), PAYOUT_SERVICE_URL: "http://127.0.0.1:9" },
  });
  t.teardown(() => lonely.stop());
  const client = createServiceClient(MerchantService, lonely.server.url, { clock });
  const merchantId = (await client.createMerchant({ name: "Lonely Shop", allowedIps: [], callbackUrl: "", sandbox: false })).merchant!.id;

  const refused = await rejectionOf(client.setSandbox({ merchantId, sandbox: true }));
  t.is(refused.code, Code.Unavailable);
  t.is(refused.reason, "SANDBOX_CHANGE_UNCHECKED");
  t.regex(refused.message, /payout service/);
  t.false((await client.getMerchant({ merchantId })).merchant!.sandbox, "nothing flipped");
  const fence = await dbOf("deposit")("merchant_mode_fences").where({ merchant_id: merchantId }).first<{ fence_id: string | null; sandbox: number | boolean | null } | undefined>();
  t.truthy(fence, "the deposit service had raised its fence");
  t.is(fence!.fence_id, null, "and it was lowered");
  t.is(Boolean(fence!.sandbox), false, "recording the kind the merchant kept");
});

test.serial("a switch whose fences could not be raised within half their life flips nothing and lowers them", async (t) => {
  // The real payout service behind a front that lets 6 s pass (the manual clock) before it
  // answers the raise: the fences stand 10 s from the raise, so the flip may not be made.
  const slowPayout: ServiceModule = {
    name: "payout",
    services: [PayoutService],
    migrations: [],
    createContext: (base: BaseContext) => base,
    access: () => [],
    routes: (router) =>
      router.service(PayoutService, {
        raiseModeFence: async (req) => {
          const answer = await fences.payouts().raiseModeFence(req);
          clock.advance(6_000);
          return answer;
        },
        lowerModeFence: (req) => fences.payouts().lowerModeFence(req),
      }),
  };
  const front = await startServices([slowPayout], { mode: "split", clock, env: { ...TEST_OPERATOR_ENV, GRPC_PORT: "0", LOG_LEVEL: "fatal" } });
  t.teardown(() => front.stop());
  const own = await createTestDatabase();
  t.teardown(() => own.drop());
  const merchantSide = await startServices([merchantModule], {
    mode: "split",
    clock,
    env: { ...TEST_OPERATOR_ENV, DATABASE_URL: own.url, MASTER_KEY: masterKey, GRPC_PORT: "0", LOG_LEVEL: "fatal", DEPOSIT_SERVICE_URL: url(), PAYOUT_SERVICE_URL: front.server.url },
  });
  t.teardown(() => merchantSide.stop());
  const client = createServiceClient(MerchantService, merchantSide.server.url, { clock });
  const merchantId = (await client.createMerchant({ name: "Slow Shop", allowedIps: [], callbackUrl: "", sandbox: false })).merchant!.id;

  const refused = await rejectionOf(client.setSandbox({ merchantId, sandbox: true }));
  t.is(refused.code, Code.Unavailable);
  t.is(refused.reason, "SANDBOX_CHANGE_UNCHECKED");
  t.false((await client.getMerchant({ merchantId })).merchant!.sandbox, "nothing flipped");
  for (const service of ["deposit", "payout"]) {
    const fence = await dbOf(service)("merchant_mode_fences").where({ merchant_id: merchantId }).first<{ fence_id: string | null; sandbox: number | boolean | null } | undefined>();
    t.is(fence?.fence_id, null, `${service}: the fence was lowered`);
    t.is(Boolean(fence?.sandbox), false, `${service}: recording the kind the merchant kept`);
  }
});

test.serial("the fence costs a merchant's first creation only: once it has a deposit (or a withdrawal), later ones read no fence, and its switch is refused all the same", async (t) => {
  const merchantId = await newMerchant();
  await payouts().adjustBalance({ merchantId, amount: 50_000n, reason: "opening credit" });
  const fenceReads = (service: string) => {
    const seen: string[] = [];
    const listener = (query: { sql: string }) => {
      if (query.sql.includes("merchant_mode_fences")) seen.push(query.sql);
    };
    dbOf(service).on("query", listener);
    return { seen, stop: () => dbOf(service).off("query", listener) };
  };
  const depositsRead = fenceReads("deposit");
  const withdrawalsRead = fenceReads("payout");
  try {
    await createDeposit(merchantId, "settled-1");
    await createWithdrawal(merchantId, "settled-w1");
    t.true(depositsRead.seen.length > 0 && withdrawalsRead.seen.length > 0, "the first ones read the fence");
    depositsRead.seen.length = 0;
    withdrawalsRead.seen.length = 0;
    await createDeposit(merchantId, "settled-2");
    await createWithdrawal(merchantId, "settled-w2");
    t.deepEqual(depositsRead.seen, [], "a merchant with a deposit: no fence read");
    t.deepEqual(withdrawalsRead.seen, [], "a merchant with a withdrawal: no fence read");
  } finally {
    depositsRead.stop();
    withdrawalsRead.stop();
  }
  const refused = await rejectionOf(merchants().setSandbox({ merchantId, sandbox: true }));
  t.is(refused.reason, "SANDBOX_CHANGE_REFUSED", "its transactions still block the switch");
  t.is((await merchants().getMerchant({ merchantId })).merchant!.sandbox, false);
});
