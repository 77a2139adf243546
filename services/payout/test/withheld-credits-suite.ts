import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import type { ExecutionContext, TestFn } from "ava";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, WithheldCreditStatus, type WithheldCredit } from "@payments/contracts/payout";
import { errorInfo, newId, type RunningServices } from "@payments/kit";
import { createServiceClient, eventually, type manualClock, rejectionOf, TEST_APPROVER, testOperator } from "@payments/testing";
import type { Knex } from "knex";
import { creditDeposit, DEPOSIT_COMPLETED_TOPIC } from "../src/deposit-credits.js";
import type { WithheldCreditRow } from "../src/withheld-credits.js";
import { payoutContext } from "./worker-fixtures.js";

// Withheld credits, the same tests on SQLite (withheld-credits-sqlite.test.ts) and MySQL with
// JetStream (withheld-credits-mysql.test.ts): the merchant service (GetMerchant, the credit's
// last gate), the bank catalog and the payout service in one process, worker off. A merchant "goes live" by its
// row in the merchant service's database, as it would look to the payout service had the
// deposit raced the switch (SetSandbox itself refuses a merchant with deposits). Each test uses
// merchants of its own, so the serial order only matters for the shared clock.

type Clock = ReturnType<typeof manualClock>;

interface Deposit {
  id: string;
  merchantId: string;
  amount: number;
  bytes: Uint8Array;
}

export function withheldCreditSuite(test: TestFn, services: () => RunningServices, clock: Clock): void {
  const payouts = () => createServiceClient(PayoutService, services().server.url);
  const merchants = () => createServiceClient(MerchantService, services().server.url);
  const payout = () => payoutContext(services());
  const db = (): Knex => payout().db;
  const merchantDb = (): Knex => services().contexts.get("merchant")!.db;

  async function newMerchant(): Promise<string> {
    return (await merchants().createMerchant({ name: "Withheld Credit Shop", sandbox: true })).merchant!.id;
  }

  /** The race the record is for: the merchant is live by the time its sandbox deposit's event arrives. */
  async function setLive(merchantId: string, live = true): Promise<void> {
    await merchantDb()("merchants").where({ id: merchantId }).update({ sandbox: !live });
    // Changed by hand, so no MerchantChanged: the payout's cached answer is dropped as the event
    // (or MERCHANT_CACHE_TTL) would drop it.
    payout().merchantCache.invalidate(merchantId);
  }

  async function liveMerchant(): Promise<string> {
    const id = await newMerchant();
    await setLive(id);
    return id;
  }

  /** A completed sandbox deposit's event, as the deposit service publishes it. */
  function sandboxDeposit(merchantId: string, amount: number, currency = "TRY"): Deposit {
    const id = newId("dep");
    const event = create(DepositStatusChangedSchema, {
      eventId: newId("evt"),
      deposit: { id, merchantId, processId: `order-${id.slice(-6)}`, amount: BigInt(amount), requestedAmount: BigInt(amount), currency, status: DepositStatus.COMPLETED, sequence: 2n, sandbox: true },
      previousStatus: DepositStatus.PENDING,
      occurredAt: timestampFromMs(clock.now().getTime()),
    });
    return { id, merchantId, amount, bytes: toBinary(DepositStatusChangedSchema, event) };
  }

  const records = async (depositId: string) => (await db()("withheld_credits").where({ deposit_id: depositId })) as WithheldCreditRow[];
  const credits = async (depositId: string) => (await db()("ledger_entries").where({ kind: "deposit_credit", transaction_id: depositId })) as Array<{ available_delta: number | string; reason: string | null }>;
  const entryCount = async (merchantId: string) => Number((await db()("ledger_entries").where({ merchant_id: merchantId }).count<Array<{ n: number | string }>>({ n: "*" }))[0]?.n ?? 0);

  async function balance(merchantId: string): Promise<{ available: number; held: number }> {
    const row = (await db()("balances").where({ merchant_id: merchantId, currency: "TRY" }).first()) as { available: number | string; held: number | string } | undefined;
    return { available: Number(row?.available ?? 0), held: Number(row?.held ?? 0) };
  }

  /** Every balance of the merchant equals the sums of its entries (what CheckLedger also asks). */
  async function assertBalanceIsLedger(t: ExecutionContext, merchantId: string): Promise<void> {
    const res = await payouts().checkLedger({ allMerchants: true, credits: [] });
    const mine = res.merchants.filter((m) => m.merchantId === merchantId);
    t.true(mine.length > 0);
    for (const m of mine) t.true(m.balanced, `${m.merchantId} ${m.currency}: ${m.available}/${m.held} vs ledger ${m.ledgerAvailable}/${m.ledgerHeld}`);
  }

  /** Delivers the deposit's event and answers its record (the list's view). */
  async function withheld(deposit: Deposit): Promise<WithheldCredit> {
    const outcome = await creditDeposit(payout(), deposit.bytes);
    if (outcome !== "refused") throw new Error(`creditDeposit answered ${outcome}, expected refused`);
    const { credits: listed } = await payouts().listWithheldCredits({ merchantId: deposit.merchantId, limit: 100 });
    const record = listed.find((c) => c.depositId === deposit.id);
    if (!record) throw new Error(`no withheld credit for ${deposit.id}`);
    return record;
  }

  /** Calls as a finance operator: the actor recorded is the subject of their assertion (a credit: theirs and its approver's). */
  const payoutsAs = (actor: string) => createServiceClient(PayoutService, services().server.url, { operator: testOperator("finance", actor) });
  const resolve = (id: string, decision: "credit" | "dismiss", extra: Partial<{ actor: string; reason: string }> = {}) =>
    payoutsAs(extra.actor ?? "operator-ayse").resolveWithheldCredit({ id, actor: extra.actor ?? "operator-ayse", reason: extra.reason ?? "checked with the bank", decision: { case: decision, value: true } });

  const ledgerCheck = (d: Deposit) => payouts().checkLedger({ allMerchants: true, credits: [{ depositId: d.id, merchantId: d.merchantId, amount: BigInt(d.amount), currency: "TRY" }] });

  test.serial("a sandbox deposit of a merchant that went live is withheld: one open record however often its event is delivered, no ledger entry, no balance change", async (t) => {
    const merchantId = await newMerchant();
    await payouts().adjustBalance({ merchantId, amount: 10_000n, reason: "opening funds" });
    await setLive(merchantId);
    const entriesBefore = await entryCount(merchantId);

    const deposit = sandboxDeposit(merchantId, 25_000);
    t.is(await creditDeposit(payout(), deposit.bytes), "refused");
    t.is(await creditDeposit(payout(), deposit.bytes), "refused", "a repeated delivery");
    const [row, ...more] = await records(deposit.id);
    t.deepEqual(more, []);
    t.like(row, { merchant_id: merchantId, status: "open", reason: "sandbox deposit of a live merchant", resolved_by: null, resolution: null, resolved_at: null, currency: "TRY" });
    t.is(Number(row!.amount), 25_000);
    t.is(Number(row!.created_at), clock.now().getTime());
    t.regex(row!.id, /^whc_/);
    t.regex(row!.event_id, /^evt_/);
    t.deepEqual(await credits(deposit.id), []);
    t.is(await entryCount(merchantId), entriesBefore);
    t.deepEqual(await balance(merchantId), { available: 10_000, held: 0 });

    // The RPC's view of the same record.
    const { credits: listed } = await payouts().listWithheldCredits({ merchantId });
    t.is(listed.length, 1);
    t.like(listed[0], { id: row!.id, depositId: deposit.id, merchantId, amount: 25_000n, currency: "TRY", status: WithheldCreditStatus.OPEN, resolvedBy: "", resolution: "", resolvedAt: undefined });
    t.is(listed[0]!.processId, `order-${deposit.id.slice(-6)}`);

    // Five deliveries at once (replicas racing): still one record, nothing credited.
    const raced = sandboxDeposit(merchantId, 4_000);
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => creditDeposit(payout(), raced.bytes)));
    t.deepEqual(outcomes, Array.from({ length: 5 }, () => "refused"));
    t.is((await records(raced.id)).length, 1);
    t.deepEqual(await credits(raced.id), []);
    t.deepEqual(await balance(merchantId), { available: 10_000, held: 0 });
    await assertBalanceIsLedger(t, merchantId);
  });

  test.serial("through the consumer: the event delivered twice on the bus makes one open record and credits nothing", async (t) => {
    const merchantId = await liveMerchant();
    const deposit = sandboxDeposit(merchantId, 7_700);
    // Two messages (two msg ids: the bus would drop a repeated id itself), as a redelivery after a lost ack.
    await payout().bus.publish(DEPOSIT_COMPLETED_TOPIC, deposit.bytes, newId("msg"));
    await payout().bus.publish(DEPOSIT_COMPLETED_TOPIC, deposit.bytes, newId("msg"));
    await eventually(async () => (await records(deposit.id)).length > 0, "the consumer's record");
    const later = sandboxDeposit(merchantId, 1);
    await payout().bus.publish(DEPOSIT_COMPLETED_TOPIC, later.bytes, newId("msg"));
    // Ordered delivery: once a later event is handled the two before it were too.
    await eventually(async () => (await records(later.id)).length > 0, "the later event handled");
    t.is((await records(deposit.id)).length, 1);
    t.deepEqual(await credits(deposit.id), []);
    t.deepEqual(await balance(merchantId), { available: 0, held: 0 });
  });

  test.serial("a sandbox merchant's deposit is credited as before; one credited before its merchant went live is not withheld on a redelivery", async (t) => {
    const merchantId = await newMerchant();
    const deposit = sandboxDeposit(merchantId, 3_300);
    t.is(await creditDeposit(payout(), deposit.bytes), "credited");
    await setLive(merchantId);
    t.is(await creditDeposit(payout(), deposit.bytes), "already");
    t.deepEqual(await records(deposit.id), []);
    t.is((await credits(deposit.id)).length, 1);
    t.deepEqual(await balance(merchantId), { available: 3_300, held: 0 });
  });

  test.serial("a withheld deposit stays withheld when its event comes again after its merchant counts as sandbox again", async (t) => {
    const merchantId = await liveMerchant();
    const deposit = sandboxDeposit(merchantId, 5_000);
    t.is(await creditDeposit(payout(), deposit.bytes), "refused");
    await setLive(merchantId, false);
    t.is(await creditDeposit(payout(), deposit.bytes), "refused");
    t.deepEqual(await credits(deposit.id), []);
    t.deepEqual(await balance(merchantId), { available: 0, held: 0 });
    t.like((await records(deposit.id))[0], { status: "open" });
  });

  test.serial("ListWithheldCredits pages newest first by (created_at, id) with an opaque cursor, filtered by merchant and status", async (t) => {
    const a = await liveMerchant();
    const b = await liveMerchant();
    const made: Array<{ merchantId: string; deposit: Deposit }> = [];
    // Two at one millisecond, so the id decides between them.
    for (const [merchantId, step] of [[a, 1000], [b, 0], [a, 1000], [a, 0], [b, 1000], [a, 1000]] as const) {
      clock.advance(step);
      const deposit = sandboxDeposit(merchantId, 100 + made.length);
      t.is(await creditDeposit(payout(), deposit.bytes), "refused");
      made.push({ merchantId, deposit });
    }
    const ours = new Set(made.map((m) => m.deposit.id));
    const rows = ((await db()("withheld_credits").whereIn("deposit_id", [...ours])) as WithheldCreditRow[]).sort((x, y) =>
      Number(y.created_at) - Number(x.created_at) || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0),
    );

    async function all(filter: { merchantId?: string; status?: WithheldCreditStatus }, limit: number): Promise<{ ids: string[]; pages: number }> {
      const ids: string[] = [];
      let cursor = "";
      let pages = 0;
      do {
        const page = await payouts().listWithheldCredits({ ...filter, limit, cursor });
        t.true(page.credits.length <= limit);
        ids.push(...page.credits.map((c) => c.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== "");
      return { ids, pages };
    }

    const ofA = await all({ merchantId: a }, 2);
    t.deepEqual(ofA.ids, rows.filter((r) => r.merchant_id === a).map((r) => r.id));
    t.is(ofA.pages, 2);
    const ofB = await all({ merchantId: b }, 1);
    t.deepEqual(ofB.ids, rows.filter((r) => r.merchant_id === b).map((r) => r.id));
    // Across merchants, in the same order (others' records in between are other tests').
    const everyone = await all({}, 3);
    t.deepEqual(
      everyone.ids.filter((id) => rows.some((r) => r.id === id)),
      rows.map((r) => r.id),
    );
    // The list pages by key: a record created meanwhile (newer) does not shift the next page.
    const first = await payouts().listWithheldCredits({ merchantId: a, limit: 2 });
    clock.advance(1000);
    await creditDeposit(payout(), sandboxDeposit(a, 999).bytes);
    const second = await payouts().listWithheldCredits({ merchantId: a, limit: 2, cursor: first.nextCursor });
    t.deepEqual(
      second.credits.map((c) => c.id),
      rows.filter((r) => r.merchant_id === a).slice(2, 4).map((r) => r.id),
    );

    // Status filter: one of a's credited, one dismissed.
    const ofAIds = rows.filter((r) => r.merchant_id === a).map((r) => r.id);
    await resolve(ofAIds[1]!, "credit");
    await resolve(ofAIds[2]!, "dismiss");
    const open = await payouts().listWithheldCredits({ merchantId: a, status: WithheldCreditStatus.OPEN, limit: 100 });
    t.deepEqual(open.credits.map((c) => c.status), open.credits.map(() => WithheldCreditStatus.OPEN));
    t.false(open.credits.some((c) => c.id === ofAIds[1] || c.id === ofAIds[2]));
    t.deepEqual((await payouts().listWithheldCredits({ merchantId: a, status: WithheldCreditStatus.CREDITED })).credits.map((c) => c.id), [ofAIds[1]]);
    t.deepEqual((await payouts().listWithheldCredits({ merchantId: a, status: WithheldCreditStatus.DISMISSED })).credits.map((c) => c.id), [ofAIds[2]]);
    t.deepEqual((await payouts().listWithheldCredits({ merchantId: "no-such-merchant" })).credits, []);

    for (const [req, field] of [
      [{ cursor: "not-a-cursor" }, "cursor"],
      [{ limit: 101 }, "limit"],
      [{ status: 42 as WithheldCreditStatus }, "status"],
      [{ merchantId: "m".repeat(101) }, "merchant_id"],
    ] as const) {
      t.like(await rejectionOf(payouts().listWithheldCredits(req)), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field }, field);
    }
  });

  test.serial("credit posts exactly one ledger credit, the normal one, in the same decision; the balance equals its ledger and CheckLedger finds the credit", async (t) => {
    const merchantId = await liveMerchant();
    const deposit = sandboxDeposit(merchantId, 42_000);
    const record = await withheld(deposit);
    clock.advance(60_000);
    const res = await resolve(record.id, "credit", { actor: "operator-mehmet", reason: "  the bank shows the money arrived  " });
    // Crediting withheld money needs a second operator (the harness's approver): both are recorded.
    t.like(res.credit, { id: record.id, status: WithheldCreditStatus.CREDITED, resolvedBy: `operator-mehmet, approved by ${TEST_APPROVER.subject}`, resolution: "the bank shows the money arrived" });
    t.is(timestampMs(res.credit!.resolvedAt!), clock.now().getTime());

    const posted = await credits(deposit.id);
    t.is(posted.length, 1);
    t.is(Number(posted[0]!.available_delta), 42_000);
    t.regex(posted[0]!.reason ?? "", new RegExp(`${record.id} credited by operator-mehmet`));
    t.deepEqual(await balance(merchantId), { available: 42_000, held: 0 });
    await assertBalanceIsLedger(t, merchantId);
    t.deepEqual((await ledgerCheck(deposit)).discrepancies, []);

    // A second decision, either way, is refused and changes nothing.
    for (const decision of ["credit", "dismiss"] as const) {
      t.like(await rejectionOf(resolve(record.id, decision)), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE", details: { status: "credited" } }, decision);
    }
    t.is((await credits(deposit.id)).length, 1);
    t.like((await records(deposit.id))[0], { status: "credited", resolved_by: `operator-mehmet, approved by ${TEST_APPROVER.subject}`, resolution: "the bank shows the money arrived" });
    t.deepEqual(await balance(merchantId), { available: 42_000, held: 0 });

    // The event again: already credited, nothing changes, no new record.
    t.is(await creditDeposit(payout(), deposit.bytes), "already");
    t.is((await credits(deposit.id)).length, 1);
    t.is((await records(deposit.id)).length, 1);

    // The credit is the merchant's money now: a withdrawal can take it.
    const { withdrawal } = await payouts().createWithdrawal({ merchantId, processId: "after-credit", amount: 40_000n, iban: "TR330006100519786457841326", accountName: "Ali Can", userId: "u", userName: "ali", name: "Ali Can" });
    t.truthy(withdrawal);
    await assertBalanceIsLedger(t, merchantId);
  });

  test.serial("dismiss posts nothing; a second decision is refused and changes nothing", async (t) => {
    const merchantId = await liveMerchant();
    const deposit = sandboxDeposit(merchantId, 9_900);
    const record = await withheld(deposit);
    const res = await resolve(record.id, "dismiss", { reason: "test money from the sandbox checkout" });
    t.like(res.credit, { status: WithheldCreditStatus.DISMISSED, resolvedBy: "operator-ayse", resolution: "test money from the sandbox checkout" });
    t.truthy(res.credit!.resolvedAt);
    t.deepEqual(await credits(deposit.id), []);
    t.deepEqual(await balance(merchantId), { available: 0, held: 0 });
    t.is(await entryCount(merchantId), 0);

    for (const decision of ["credit", "dismiss"] as const) {
      t.like(await rejectionOf(resolve(record.id, decision)), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE", details: { status: "dismissed" } }, decision);
    }
    t.deepEqual(await credits(deposit.id), []);
    t.like((await records(deposit.id))[0], { status: "dismissed", resolution: "test money from the sandbox checkout" });
    // Redelivered: still not credited.
    t.is(await creditDeposit(payout(), deposit.bytes), "refused");
    t.deepEqual(await credits(deposit.id), []);
  });

  test.serial("credit and dismiss racing on one record: exactly one decides, the other is refused, at most one credit", async (t) => {
    const merchantId = await liveMerchant();
    for (let round = 0; round < 3; round++) {
      const deposit = sandboxDeposit(merchantId, 1_000);
      const record = await withheld(deposit);
      const outcomes = await Promise.allSettled([resolve(record.id, "credit"), resolve(record.id, "dismiss"), resolve(record.id, "credit")]);
      const won = outcomes.filter((o) => o.status === "fulfilled");
      t.is(won.length, 1);
      // The loser is refused by the record's state, or, on a live merchant where both credits wait for
      // a second operator, by the one approval the two identical requests share (approved once).
      for (const o of outcomes) if (o.status === "rejected") t.true(["INVALID_TRANSACTION_STATE", "APPROVAL_NOT_PENDING"].includes(errorInfo(o.reason).reason ?? ""), JSON.stringify(errorInfo(o.reason)));
      const status = (await records(deposit.id))[0]!.status;
      t.is((await credits(deposit.id)).length, status === "credited" ? 1 : 0);
    }
    await assertBalanceIsLedger(t, merchantId);
  });

  test.serial("CheckLedger reports an open withheld deposit as a discrepancy and a dismissed one as decided, never as a silently missing credit; the balances stay balanced", async (t) => {
    const merchantId = await liveMerchant();
    const open = sandboxDeposit(merchantId, 12_345);
    const openRecord = await withheld(open);
    const dismissed = sandboxDeposit(merchantId, 500);
    const dismissedRecord = await withheld(dismissed);
    await resolve(dismissedRecord.id, "dismiss", { actor: "operator-zeynep", reason: "sandbox test payment" });
    const missing = { id: newId("dep"), merchantId, amount: 700, bytes: new Uint8Array() };

    const res = await payouts().checkLedger({
      allMerchants: true,
      credits: [open, dismissed, missing].map((d) => ({ depositId: d.id, merchantId: d.merchantId, amount: BigInt(d.amount), currency: "TRY" })),
    });
    t.is(res.discrepancies.length, 2, res.discrepancies.join("\n"));
    const about = (id: string) => res.discrepancies.find((d) => d.startsWith(`deposit ${id}:`)) ?? "";
    t.is(
      about(open.id),
      `deposit ${open.id}: completed with 123.45 TRY to merchant ${merchantId}, but its credit is withheld (sandbox deposit of a live merchant; withheld credit ${openRecord.id}, open: in no balance until an operator credits or dismisses it)`,
    );
    // An operator's dismissal is a decision, not a discrepancy: listed apart, so reconciliation can balance.
    t.deepEqual(res.dismissed, [
      `deposit ${dismissed.id}: completed with 5.00 TRY to merchant ${merchantId}, but its credit is withheld (sandbox deposit of a live merchant; withheld credit ${dismissedRecord.id}, dismissed by operator-zeynep: sandbox test payment; in no balance)`,
    ]);
    t.regex(about(missing.id), /but the ledger has no credit for it$/);
    t.false(about(open.id).includes("no credit for it"));
    t.true(res.merchants.filter((m) => m.merchantId === merchantId).every((m) => m.balanced));

    // Once credited by an operator it is an ordinary credit: nothing to report.
    await resolve(openRecord.id, "credit");
    t.deepEqual((await ledgerCheck(open)).discrepancies, []);
    // A record that says another amount than the deposit service is named with the difference.
    const other = await payouts().checkLedger({ allMerchants: true, credits: [{ depositId: dismissed.id, merchantId, amount: 600n, currency: "TRY" }] });
    t.regex(other.discrepancies[0] ?? "", /\(the record differs: recorded with 5.00 TRY\)$/);
  });

  test.serial("ResolveWithheldCredit: an unknown id is NOT_FOUND; reason and exactly one true decision are required; nothing changes; the actor is the verified operator, whatever the request's field says", async (t) => {
    const merchantId = await liveMerchant();
    const deposit = sandboxDeposit(merchantId, 800);
    const record = await withheld(deposit);
    t.like(await rejectionOf(resolve("whc_unknown", "credit")), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
    const base = { id: record.id, actor: "operator-ayse", reason: "why" };
    for (const [req, field] of [
      [{ ...base, decision: { case: undefined } }, "decision"],
      [{ ...base, decision: { case: "credit", value: false } }, "credit"],
      [{ ...base, decision: { case: "dismiss", value: false } }, "dismiss"],
      [{ ...base, reason: "", decision: { case: "credit", value: true } }, "reason"],
      [{ ...base, id: "", decision: { case: "credit", value: true } }, "id"],
    ] as const) {
      t.like(await rejectionOf(payouts().resolveWithheldCredit(req)), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field }, field);
    }
    t.like((await records(deposit.id))[0], { status: "open", resolved_by: null });
    t.deepEqual(await credits(deposit.id), []);
    // The request's actor no longer names anyone (it was required): a blank one is not refused,
    // and the operator whose assertion came with the call is who decided.
    const blank = await payoutsAs("operator-ayse").resolveWithheldCredit({ ...base, actor: "  ", decision: { case: "dismiss", value: true } });
    t.like(blank.credit, { status: WithheldCreditStatus.DISMISSED, resolvedBy: "operator-ayse" });
  });
}
