import { InvalidArgumentError, type Command } from "commander";
import { create } from "@bufbuild/protobuf";
import {
  ListWithheldCreditsResponseSchema,
  ResolveWithheldCreditResponseSchema,
  WithheldCreditStatus,
  type ResolveWithheldCreditRequest,
  type WithheldCredit,
} from "@payments/contracts/payout";
import { WITHHELD_CREDIT_STATUSES, isWithheldCreditStatusName, withheldCreditStatusFromProto, withheldCreditStatusToProto } from "@payments/contracts/statuses";
import { parseRequiredText } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { operatorName } from "../operator.js";
import { formatMoney, formatTime, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";

// Withheld credits: completed deposits the payout service did not credit by itself (a sandbox
// deposit whose merchant is live by the time its completion arrives). Each waits, in no
// balance, for an operator: credit it (the money was real) or dismiss it. These commands are
// that worklist and the two decisions.

/** ListWithheldCredits takes 1..100 per page; 0 means 20. */
export const WITHHELD_CREDIT_PAGE_MAX = 100;

/** open, credited or dismissed (any case) → the proto enum. */
export function parseWithheldCreditStatus(value: string): WithheldCreditStatus {
  const text = value.trim().toLowerCase();
  if (!isWithheldCreditStatusName(text)) throw new InvalidArgumentError(`expected one of ${WITHHELD_CREDIT_STATUSES.join(", ")}.`);
  return withheldCreditStatusToProto(text);
}

export function withheldCreditStatusLabel(status: WithheldCreditStatus): string {
  return withheldCreditStatusFromProto(status) ?? "unknown";
}

/** "credited by ayse: the bank shows it" / "—" while open. */
function decisionLabel(c: WithheldCredit): string {
  if (c.status === WithheldCreditStatus.OPEN) return "—";
  return `${c.resolvedBy || "—"}: ${c.resolution || "—"}`;
}

export function printWithheldCredit(out: Output, c: WithheldCredit): void {
  const fields: Array<[string, string]> = [
    ["id", c.id],
    ["status", withheldCreditStatusLabel(c.status)],
    ["deposit", `${c.depositId}${c.processId ? ` (process id ${c.processId})` : ""}`],
    ["merchant", c.merchantId],
    ["amount", formatMoney(c.amount, c.currency)],
    ["withheld because", c.reason],
    ["withheld at", formatTime(c.createdAt)],
  ];
  if (c.status === WithheldCreditStatus.OPEN) {
    fields.push(["in a balance", "no: `withheld-credit credit` or `withheld-credit dismiss` decides it"]);
  } else {
    fields.push(["decided by", c.resolvedBy || "—"], ["why", c.resolution || "—"], ["decided at", formatTime(c.resolvedAt)]);
    fields.push(["in a balance", c.status === WithheldCreditStatus.CREDITED ? "yes: credited to the merchant's available balance" : "no: dismissed"]);
  }
  out.fields(fields);
}

function required(c: WithheldCredit | undefined): WithheldCredit {
  if (!c) throw new Error("the service returned no withheld credit");
  return c;
}

type Decision = ResolveWithheldCreditRequest["decision"];

export function registerWithheldCreditCommands(program: Command, ctx: CommandContext): void {
  const group = program
    .command("withheld-credit")
    .description("completed deposits the payout service did not credit (sandbox money of a merchant now live): list them, and credit or dismiss each one");

  pagingOptions(
    group
      .command("list")
      .description("list withheld credits, newest first, a page at a time or --all")
      .option("--merchant <id>", "only this merchant's (default: every merchant's)", parseRequiredText)
      .option("--status <status>", `only those in this status: ${WITHHELD_CREDIT_STATUSES.join("|")} (open: waiting for an operator)`, parseWithheldCreditStatus),
    WITHHELD_CREDIT_PAGE_MAX,
    20,
  )
    .addHelpText("after", `\nGive the same --merchant and --status with --cursor as on the page that printed it.${pagingHelp("credits")}`)
    .action(async (opts: { merchant?: string; status?: WithheldCreditStatus } & PagingOptions, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await payouts.listWithheldCredits({ merchantId: opts.merchant ?? "", status: opts.status ?? WithheldCreditStatus.UNSPECIFIED, limit, cursor });
          return { items: res.credits, nextCursor: res.nextCursor };
        },
        json: (credits, nextCursor) => out.message(ListWithheldCreditsResponseSchema, create(ListWithheldCreditsResponseSchema, { credits: [...credits], nextCursor })),
        headers: ["ID", "STATUS", "DEPOSIT", "MERCHANT", "AMOUNT", "WITHHELD", "DECIDED BY: WHY"],
        row: (c) => [c.id, withheldCreditStatusLabel(c.status), c.depositId, c.merchantId, formatMoney(c.amount, c.currency), formatTime(c.createdAt), decisionLabel(c)],
        empty: opts.status === undefined && opts.merchant === undefined ? "No withheld credits." : "No withheld credits like that.",
        more: "More withheld credits",
        max: WITHHELD_CREDIT_PAGE_MAX,
      });
    });

  const decideHelp = `
--actor defaults to the PAYMENTS_OPERATOR environment variable, else the OS user name. Who and why
are recorded on the withheld credit. Only an open one can be decided; a decided one fails with
INVALID_TRANSACTION_STATE and nothing changes.
With --json, prints {"credit":{…}}.`;

  async function decide(cmd: Command, id: string, opts: { reason: string; actor?: string }, decision: Decision): Promise<void> {
    const actor = operatorName(opts.actor, ctx.io.env);
    const { out, payouts } = ctx.session(cmd);
    const res = await payouts.resolveWithheldCredit({ id, actor, reason: opts.reason, decision });
    if (out.json) return out.message(ResolveWithheldCreditResponseSchema, res);
    const c = required(res.credit);
    out.line(
      c.status === WithheldCreditStatus.CREDITED
        ? `Withheld credit ${c.id} credited: ${formatMoney(c.amount, c.currency)} of deposit ${c.depositId} is now in merchant ${c.merchantId}'s available balance.`
        : `Withheld credit ${c.id} dismissed: deposit ${c.depositId} (${formatMoney(c.amount, c.currency)}) stays in no balance.`,
    );
    printWithheldCredit(out, c);
  }

  const reasonOption = ["--reason <text>", "why (required; recorded with the decision)"] as const;
  const actorOption = ["--actor <name>", "who decides (default: $PAYMENTS_OPERATOR, else the OS user name)"] as const;

  group
    .command("credit")
    .description("credit an open withheld credit to its merchant's available balance after all (the money was real): one ledger deposit_credit, as a normal credit")
    .argument("<id>", "the withheld credit's id (whc_…)")
    .requiredOption(...reasonOption, parseRequiredText)
    .option(...actorOption, parseRequiredText)
    .addHelpText("after", decideHelp)
    .action((id: string, opts: { reason: string; actor?: string }, cmd: Command) => decide(cmd, id, opts, { case: "credit", value: true }));

  group
    .command("dismiss")
    .description("dismiss an open withheld credit (it was sandbox money): nothing is credited, the record is closed")
    .argument("<id>", "the withheld credit's id (whc_…)")
    .requiredOption(...reasonOption, parseRequiredText)
    .option(...actorOption, parseRequiredText)
    .addHelpText("after", decideHelp)
    .action((id: string, opts: { reason: string; actor?: string }, cmd: Command) => decide(cmd, id, opts, { case: "dismiss", value: true }));
}
