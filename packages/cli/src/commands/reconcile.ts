import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Command } from "commander";
import { AccountReconciliationSchema, DepositCreditSchema, type AccountReconciliation } from "@payments/contracts/deposit";
import { MerchantLedgerCheckSchema, type MerchantLedgerCheck } from "@payments/contracts/payout";
import { parseIsoTime } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { CommandFailed, UsageError } from "../errors.js";
import { formatMoney, messageJson } from "../output.js";

// Reconciliation of the receiving accounts: the money received on each account (per currency)
// against where it went — credited to deposits, still in suspense (unmatched, in review), or
// returned to the sender. The deposit service computes it; this command prints it and exits 1
// when anything does not add up, so it can run from cron or CI.
//
// Then the merchant ledger's side (the payout service's CheckLedger, across every merchant):
// every balance row against the sum of its ledger entries, and every deposit the deposit
// service says was completed by a transfer against its one ledger credit. Neither service can
// see the other's books, so only both checks together show money received but never (or
// wrongly) credited to a merchant.

function balanced(account: AccountReconciliation): boolean {
  return account.difference === 0n && account.discrepancies.length === 0;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function ledgerDifference(m: MerchantLedgerCheck): string {
  const parts: string[] = [];
  if (m.available !== m.ledgerAvailable) parts.push(`available ${m.available} vs ledger ${m.ledgerAvailable}`);
  if (m.held !== m.ledgerHeld) parts.push(`held ${m.held} vs ledger ${m.ledgerHeld}`);
  return `merchant ${m.merchantId} ${m.currency} ${parts.join(", ")}`;
}

/** A month of a busy gateway is ~100,000 credits to check: both reads get longer than the CLI's usual deadline. */
const RECONCILE_TIMEOUT_MS = 120_000;

export function registerReconcileCommand(program: Command, ctx: CommandContext): void {
  program
    .command("reconcile")
    .description("per receiving account and currency: received = credited + suspense + returned; every merchant balance = its ledger, every credited deposit in the ledger once; exit 1 unless balanced")
    .option("--from <time>", "transfers reported at or after this ISO 8601 date or time (default: since the beginning)", parseIsoTime)
    .option("--to <time>", "transfers reported before this ISO 8601 date or time (default: now)", parseIsoTime)
    .addHelpText(
      "after",
      `
A date alone is midnight UTC; a time needs its zone (2026-11-22T10:00:00+03:00).
Then checks the merchant ledger (every merchant): each balance row against the sum of its
ledger entries, and each deposit completed by a transfer against its one ledger credit
(missing, another amount, another merchant, credited twice). A deposit completed moments
ago may show as missing until the payout service has credited it; run again to tell.
Exit 0 when everything is balanced (every difference 0, no discrepancy), 1 otherwise.
With --json, prints {"balanced":true|false,"accounts":[{"iban","currency","received","credited",
"suspense","returned","difference","discrepancies":[…]}],"merchants":[{"merchantId","currency",
"available","held","ledgerAvailable","ledgerHeld","balanced"}],"discrepancies":[…],"dismissed":[…],"credits":[…]}
(amounts as numbers, kuruş).`,
    )
    .action(async (opts: { from?: Date; to?: Date }, cmd: Command) => {
      if (opts.from && opts.to && opts.from.getTime() >= opts.to.getTime()) throw new UsageError("--from must be before --to.");
      const { out, deposits, payouts } = ctx.session(cmd);
      const res = await deposits.getReconciliation(
        {
          from: opts.from ? timestampFromDate(opts.from) : undefined,
          to: opts.to ? timestampFromDate(opts.to) : undefined,
        },
        { timeoutMs: RECONCILE_TIMEOUT_MS },
      );
      // The deposit service's DepositCredit and the payout service's are two messages of one shape.
      const credits = res.credits.map((c) => ({ depositId: c.depositId, merchantId: c.merchantId, amount: c.amount, currency: c.currency }));
      const ledger = await payouts.checkLedger({ allMerchants: true, credits }, { timeoutMs: RECONCILE_TIMEOUT_MS }).catch((err: unknown) => {
        // A payout service without CheckLedger (older, or PAYOUT_SERVICE_URL not set in a split
        // deployment so the call went elsewhere) must not pass as "balanced": say which side is missing.
        if (err instanceof ConnectError && err.code === Code.Unimplemented) {
          throw new CommandFailed("the payout service does not answer CheckLedger (is PAYOUT_SERVICE_URL set, and the payout service up to date?); the merchant ledger was not checked");
        }
        throw err;
      });
      const unbalanced = res.accounts.filter((a) => !balanced(a));
      const unbalancedMerchants = ledger.merchants.filter((m) => !m.balanced);
      const allBalanced = unbalanced.length === 0 && unbalancedMerchants.length === 0 && ledger.discrepancies.length === 0;
      if (out.json) {
        out.data({
          balanced: allBalanced,
          accounts: res.accounts.map((a) => messageJson(AccountReconciliationSchema, a)),
          merchants: ledger.merchants.map((m) => messageJson(MerchantLedgerCheckSchema, m)),
          discrepancies: ledger.discrepancies,
          dismissed: ledger.dismissed,
          credits: res.credits.map((c) => messageJson(DepositCreditSchema, c)),
        });
      } else {
        const period = `${opts.from ? opts.from.toISOString() : "the beginning"} to ${opts.to ? opts.to.toISOString() : "now"}`;
        out.line(`Reconciliation of the receiving accounts, transfers reported from ${period}:`);
        out.line();
        out.table(
          ["IBAN", "CURRENCY", "RECEIVED", "CREDITED", "SUSPENSE", "RETURNED", "DIFFERENCE", "STATE"],
          res.accounts.map((a) => [
            a.iban,
            a.currency,
            formatMoney(a.received, a.currency),
            formatMoney(a.credited, a.currency),
            formatMoney(a.suspense, a.currency),
            formatMoney(a.returned, a.currency),
            formatMoney(a.difference, a.currency),
            balanced(a) ? "balanced" : `NOT BALANCED (${a.discrepancies.length} discrepanc${a.discrepancies.length === 1 ? "y" : "ies"})`,
          ]),
          "No transfers in this period.",
        );
        for (const a of res.accounts.filter((x) => x.discrepancies.length > 0)) {
          out.line();
          out.line(`Discrepancies on ${a.iban} (${a.currency}):`);
          for (const d of a.discrepancies) out.line(`  - ${d}`);
        }
        out.line();
        out.line(
          `Merchant ledger: ${plural(ledger.merchants.length, "balance", "balances")} checked against their entries, ${plural(res.credits.length, "credited deposit", "credited deposits")} against the ledger.`,
        );
        if (unbalancedMerchants.length > 0) {
          out.line();
          out.line("Merchant balances that differ from their ledger:");
          out.table(
            ["MERCHANT", "CURRENCY", "AVAILABLE", "LEDGER AVAILABLE", "HELD", "LEDGER HELD"],
            unbalancedMerchants.map((m) => [
              m.merchantId,
              m.currency,
              formatMoney(m.available, m.currency),
              formatMoney(m.ledgerAvailable, m.currency),
              formatMoney(m.held, m.currency),
              formatMoney(m.ledgerHeld, m.currency),
            ]),
            "",
          );
        }
        if (ledger.discrepancies.length > 0) {
          out.line();
          out.line("Ledger discrepancies:");
          for (const d of ledger.discrepancies) out.line(`  - ${d}`);
        }
        if (ledger.dismissed.length > 0) {
          out.line();
          out.line("Withheld credits an operator dismissed (not in any balance, by decision):");
          for (const d of ledger.dismissed) out.line(`  - ${d}`);
        }
        out.line();
        out.line(
          allBalanced
            ? "Balanced."
            : `Not balanced: ${plural(unbalanced.length, "account", "accounts")}, ${plural(unbalancedMerchants.length, "merchant balance", "merchant balances")}, ${plural(ledger.discrepancies.length, "ledger discrepancy", "ledger discrepancies")}.`,
        );
      }
      if (!allBalanced) {
        const problems = [
          ...unbalanced.map((a) => `${a.iban} ${a.currency} difference ${a.difference}, ${a.discrepancies.length} discrepancies`),
          ...unbalancedMerchants.map(ledgerDifference),
          ...(ledger.discrepancies.length > 0 ? [plural(ledger.discrepancies.length, "ledger discrepancy", "ledger discrepancies")] : []),
        ];
        throw new CommandFailed(`not balanced: ${problems.join("; ")}`);
      }
    });
}
