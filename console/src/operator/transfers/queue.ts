import { DepositService, TransferStatus, type IncomingTransfer } from "@payments/contracts/deposit";
import { transferStatusFromProto } from "@payments/contracts/statuses";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { accountNamed, bankNamed, merchantNamed, named, Names, transferSandbox } from "../directory.js";
import { matchReasonText, scoreText, waitingReasonText } from "../../shared/match-reasons.js";
import { sandboxFilter } from "../../shared/mode.js";
import { responsiveTable, type TableColumn } from "../../shared/table.js";
import type { ConsoleContextKoa } from "../../state.js";
import { ageOf, cursorParam, money, refusalOf, refusalAlert, signedIn, timeOf, workPage, type SignedIn } from "../operator-call.js";

const PAGE_SIZE = 50;
/** Deposits whose merchant is known: a deposit never changes merchant, so what was read once stays true. */
const KNOWN_DEPOSITS = 10_000;
/** Deposits read at once for a page (its transfers' review and candidate deposits, not yet known). */
const PARALLEL = 8;

const TEXTS = {
  en: {
    otherMode: "{n} transfers of this page are sandbox money and are not shown here: switch to sandbox to see them.",
    otherModeLive: "{n} transfers of this page are live money and are not shown here: switch to live to see them.",
    noneHere: "None of this page's transfers is of this mode.",
  },
  tr: {
    otherMode: "Bu sayfadaki {n} havale test ortamı parası ve burada gösterilmiyor: görmek için test ortamına geçin.",
    otherModeLive: "Bu sayfadaki {n} havale canlı para ve burada gösterilmiyor: görmek için canlıya geçin.",
    noneHere: "Bu sayfadaki havalelerin hiçbiri bu moda ait değil.",
  },
} as const;

const depositMerchants = new WeakMap<ConsoleContext, Map<string, string>>();

/** The transfer's deposit: the one it paid, the one it waits on in review, or its best candidate. */
export function depositOf(transfer: IncomingTransfer): string {
  return transfer.depositId || transfer.reviewDepositId || transfer.candidates[0]?.depositId || "";
}

/**
 * The merchant of each deposit the transfers name, read once per deposit (GetDeposit, a few at
 * a time, each deposit once per console: its merchant never changes). A deposit that cannot be
 * read is left out: the transfer shows no merchant.
 */
export async function merchantsOfDeposits(deps: ConsoleContext, who: SignedIn, depositIds: string[]): Promise<Map<string, string>> {
  let known = depositMerchants.get(deps);
  if (!known) {
    known = new Map();
    depositMerchants.set(deps, known);
  }
  const cache = known;
  const missing = [...new Set(depositIds.filter((id) => id && !cache.has(id)))];
  for (let i = 0; i < missing.length; i += PARALLEL) {
    await Promise.all(
      missing.slice(i, i + PARALLEL).map(async (depositId) => {
        try {
          const deposit = (await who.client(DepositService).getDeposit({ allMerchants: true, key: { case: "depositId", value: depositId } })).deposit;
          if (deposit) cache.set(depositId, deposit.merchantId);
        } catch {
          // Not readable now: shown without a merchant.
        }
      }),
    );
  }
  while (cache.size > KNOWN_DEPOSITS) cache.delete(cache.keys().next().value!);
  return new Map(depositIds.flatMap((id) => (cache.has(id) ? [[id, cache.get(id)!] as const] : [])));
}

function statusText(who: SignedIn, status: TransferStatus): string {
  return who.t(`transfer.status.${transferStatusFromProto(status) ?? "unknown"}`);
}

/**
 * The queue as a responsive table (shared/table.ts): the transfer's time, status, reason, score
 * and match reasons under its id, the reference under the sender, so it fits 1280 px; on a phone
 * one card per transfer.
 */
function table(who: SignedIn, names: Names, merchants: Map<string, string>, transfers: IncomingTransfer[], now: Date): SafeHtml {
  const col = (key: Parameters<SignedIn["t"]>[0], cell: TableColumn<IncomingTransfer>["cell"], more: Partial<TableColumn<IncomingTransfer>> = {}): TableColumn<IncomingTransfer> => ({ label: who.t(key), cell, ...more });
  return responsiveTable<IncomingTransfer>({
    caption: who.t("transfers.caption"),
    rows: transfers,
    columns: [
      col("transfer.id", (tr) => html`<a href="${`/transfers/${tr.id}`}">${tr.id}</a>`),
      col("transfer.reportedAt", (tr) => html`${timeOf(tr.reportedAt, who.lang)} (${ageOf(tr.reportedAt, now, who.t)})`, { under: 0 }),
      col("transfer.status", (tr) => statusText(who, tr.status), { under: 0 }),
      col("transfer.amount", (tr) => money(tr.amount, tr.currency, who.lang), { num: true }),
      col("list.merchant", (tr) => {
        const merchantId = merchants.get(depositOf(tr));
        return merchantId ? merchantNamed(names, merchantId) : "—";
      }),
      col("transfer.receivingIban", (tr) => accountNamed(names, tr.iban)),
      col("withdrawal.bank", (tr) => {
        const account = names.account(tr.iban);
        return account ? bankNamed(names, account.bankId) : "—";
      }),
      col("transfer.sender", (tr) => tr.senderName || "—"),
      col("transfer.reference", (tr) => tr.reference || "—", { under: 7 }),
      col("transfer.reason", (tr) => waitingReasonText(who.lang, tr.unmatchedReason) || "—", { under: 0 }),
      col("transfer.score", (tr) => (tr.matchBy || tr.matchReasons.length > 0 ? scoreText(who.lang, tr.matchScore) : "—"), { under: 0 }),
      col("transfer.matchReasons", (tr) => (tr.matchReasons.length > 0 ? tr.matchReasons.map((r) => matchReasonText(who.lang, r)).join(", ") : "—"), { under: 0 }),
      col("transfer.candidates", (tr) =>
        tr.candidates.length > 0 ? tr.candidates.map((c) => html`<span>${named(names.merchant(merchants.get(c.depositId) ?? "")?.name, c.depositId)} (${scoreText(who.lang, c.score)})</span> `) : tr.reviewDepositId || "—",
      ),
    ],
  });
}

/**
 * GET /transfers: the open incoming transfers of the mode shown (the receiving account's kind, or
 * the sandbox helper's report), oldest first, paged by the deposit service's cursor, each with its
 * merchant (its deposit's), receiving account and bank by name. The service pages every kind
 * together: a page says how many of its transfers belong to the other mode.
 */
export async function transferQueue(deps: ConsoleContext, ctx: ConsoleContextKoa): Promise<void> {
  const who = signedIn(deps, ctx);
  const cursor = cursorParam(ctx.query.cursor);
  const sandbox = sandboxFilter(ctx.state.mode);
  const t = TEXTS[who.lang];
  let page;
  let names: Names;
  try {
    [page, names] = await Promise.all([who.client(DepositService).listUnmatchedTransfers({ includeReview: true, limit: PAGE_SIZE, cursor }), Names.of(deps, who)]);
  } catch (err) {
    const refusal = refusalOf(err, who.t);
    return workPage(ctx, who, { title: who.t("transfers.title"), body: refusalAlert(refusal) }, refusal.status);
  }
  await names.ensure({ ibans: page.transfers.map((tr) => tr.iban) });
  const shown = page.transfers.filter((tr) => (transferSandbox(names, tr) ?? false) === sandbox);
  const hidden = page.transfers.length - shown.length;
  const merchants = await merchantsOfDeposits(deps, who, shown.flatMap((tr) => [depositOf(tr), ...tr.candidates.map((c) => c.depositId)]));
  await names.ensure({ merchants: merchants.values() });
  const list = shown.length > 0 ? table(who, names, merchants, shown, deps.clock.now()) : html`<p>${page.transfers.length > 0 ? t.noneHere : who.t("transfers.empty")}</p>`;
  const note = hidden > 0 ? html`<p class="hint" role="note">${(sandbox ? t.otherModeLive : t.otherMode).replace("{n}", String(hidden))}</p>` : null;
  const next = page.nextCursor;
  const pager = html`<nav aria-label="${who.t("pager.label")}"><ul>${cursor ? html`<li><a href="/transfers">${who.t("pager.first")}</a></li>` : null}${next ? html`<li><a href="${`/transfers?cursor=${encodeURIComponent(next)}`}" rel="next">${who.t("pager.next")}</a></li>` : null}</ul></nav>`;
  workPage(ctx, who, { title: who.t("transfers.title"), body: html`<p>${who.t("transfers.intro")}</p>${list}${note}${pager}` });
}
