import type { Deposit } from "@payments/contracts/deposit";
import { eventually } from "@payments/testing";
import { merchantUserAccount } from "../merchant-harness.js";
import { operatorAccount, PASSWORD, postFrom, reportTo, signedInAs, type Stack } from "../service-harness.js";
import type { SeededNames } from "./content.js";

/** What the walk's day left behind: who signs in, and the ids of the pages of one thing. */
export interface SeededDay {
  admin: { email: string; password: string };
  merchantUser: { email: string; password: string; merchantId: string };
  /** Operators' pages of one thing (a deposit, a transfer, …), beside the areas the navigation lists. */
  operatorDetails: string[];
  /** The merchant user's pages of one thing and the second pages of an area. */
  merchantDetails: string[];
  /** The merchants by id and the people's, banks' and payments' texts: data, which the language check leaves alone. */
  seeded: SeededNames;
}

const CUSTOMERS = [
  { id: "cust-1001", name: "Ayşe Yılmaz", username: "ayse.yilmaz" },
  { id: "cust-1002", name: "Mehmet Öztürk", username: "mehmet.ozturk" },
  { id: "cust-1003", name: "Zeynep Çelik", username: "zeynep.celik" },
  { id: "cust-1004", name: "İbrahim Şahin", username: "ibrahim.sahin" },
];

async function deposit(stack: Stack, merchantId: string, n: number, amount: bigint): Promise<Deposit> {
  const customer = CUSTOMERS[n % CUSTOMERS.length]!;
  const { deposit } = await stack.deposits.createDeposit({ merchantId, processId: `siparis-${merchantId.slice(-6)}-${n}`, amount, customer });
  return deposit!;
}

async function awaitingWithdrawal(stack: Stack, merchantId: string): Promise<string> {
  await eventually(async () => (await stack.payouts.getBalances({ merchantId })).balances.some((b) => b.available >= 120_000n), "the deposits credited");
  const created = (await stack.payouts.createWithdrawal({ merchantId, processId: "cekim-1", amount: 120_000n, accountName: "Ayşe Yılmaz", iban: "TR330006100519786457841326", userId: "cust-1001", userName: "ayse.yilmaz", name: "Ayşe Yılmaz" })).withdrawal!;
  await eventually(async () => (await stack.payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: created.id } })).withdrawal?.awaitingOperator === true, "the withdrawal awaits an operator");
  return created.id;
}

/**
 * A realistic day: three merchants with names (two live, one sandbox), deposits paid in full,
 * one paid short (its transfer in review), one left pending; a stray transfer finance asked to
 * send back (an approval that waits for a second person); a live withdrawal left to an
 * operator; callback events; an admin and an owner of the first merchant who sign in.
 */
export async function seedDay(stack: Stack): Promise<SeededDay> {
  const admin = { email: "walk-admin@example.com", password: PASSWORD };
  await operatorAccount(stack.c, admin.email, "admin");
  const names = ["Anadolu Kitap ve Kırtasiye", "Boğaziçi Elektronik", "Ege Tekstil Deneme"];
  const ids: string[] = [];
  for (const [i, name] of names.entries()) ids.push((await stack.merchants.createMerchant({ name, sandbox: i === 2 })).merchant!.id);
  const [shop, electronics, sandbox] = ids as [string, string, string];

  const paid: Deposit[] = [];
  for (const [n, amount] of [250_000n, 87_550n, 1_234_567n].entries()) {
    const d = await deposit(stack, shop, n, amount);
    await reportTo(stack, d, d.requestedAmount, `odeme ${d.reference}`, "AYSE YILMAZ");
    paid.push(d);
  }
  const other = await deposit(stack, electronics, 10, 499_900n);
  await reportTo(stack, other, other.requestedAmount, `odeme ${other.reference}`, "MEHMET OZTURK");
  const short = await deposit(stack, shop, 20, 50_000n);
  const review = await reportTo(stack, short, 49_000n, `odeme ${short.reference}`, "ZEYNEP CELIK");
  const pending = await deposit(stack, electronics, 30, 75_000n);
  await deposit(stack, sandbox, 40, 12_345n);

  const withdrawalId = await awaitingWithdrawal(stack, shop);
  const stray = await reportTo(stack, short, 2_500n, "bilinmeyen odeme", "IBRAHIM SAHIN");
  const finance = await signedInAs(stack.c, "walk-finance@example.com", "finance");
  const asked = await postFrom(finance, `/transfers/${stray.id}`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "sipariş yok", iban: "", recipientName: "" });
  const approvalId = new URL(asked.location ?? "/", stack.c.url).searchParams.get("approval");
  if (!approvalId) throw new Error(`the return did not wait for an approval: ${asked.status}`);

  let eventId = "";
  await eventually(async () => {
    eventId = (await stack.callbacks.listEvents({ allMerchants: true, transactionId: paid[0]!.id, limit: 5 })).events[0]?.id ?? "";
    return eventId !== "";
  }, "a callback event");
  const banks = (await stack.bankCatalog.listBanks({})).banks;
  const bank = banks[0]!;
  const apiKey = (await stack.merchants.getMerchant({ merchantId: shop })).merchant!.apiKey;

  const merchantUser = { email: "walk-owner@anadolu-kitap.test", password: PASSWORD, merchantId: shop };
  await merchantUserAccount(stack, shop, merchantUser.email, "owner");

  const senders = ["AYSE YILMAZ", "MEHMET OZTURK", "ZEYNEP CELIK", "IBRAHIM SAHIN", "bilinmeyen odeme", "odeme", "sipariş yok"];
  // The console's and the services' harness accounts, and the note the harness's second operator approves with.
  const people = ["walk-admin", "walk-finance", "walk-owner", "bootstrap-bot", "second-bot", "test-admin", "test-approver", "Test Approver", "approved by the test harness's second operator"];
  const accounts = (await stack.bankCatalog.listReceivingAccounts({})).accounts.map((a) => a.accountName);
  const seeded: SeededNames = {
    merchants: Object.fromEntries(ids.map((id, i) => [id, names[i]!])),
    names: [...CUSTOMERS.flatMap((c) => [c.name, c.username]), ...senders, ...people, ...banks.map((b) => b.name), ...accounts],
  };

  return {
    admin,
    seeded,
    merchantUser,
    operatorDetails: [
      `/deposits/${paid[0]!.id}`,
      `/deposits/${short.id}`,
      `/deposits/${pending.id}`,
      `/withdrawals/${withdrawalId}`,
      "/withdrawals/awaiting",
      `/transfers/${review.id}`,
      `/events/${eventId}`,
      `/merchants/${shop}`,
      `/banks/${bank.id}`,
      `/approvals/deposit/${approvalId}`,
      "/totp",
    ],
    merchantDetails: [
      "/merchant/payments?kind=withdrawals",
      `/merchant/deposits/${paid[0]!.id}`,
      `/merchant/deposits/${short.id}`,
      `/merchant/withdrawals/${withdrawalId}`,
      "/merchant/developers/events",
      `/merchant/developers/keys/${apiKey}`,
      "/merchant/team/audit",
      "/merchant/totp",
    ],
  };
}
