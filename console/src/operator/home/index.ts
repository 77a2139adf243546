import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CallbackService, DeliveryStatus } from "@payments/contracts/callback";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { PayoutService, WithdrawalStatus, WithheldCreditStatus } from "@payments/contracts/payout";
import type { ConsoleContext } from "../../context.js";
import { waitingStamps } from "../approvals/inbox.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { TextKey } from "../texts/index.js";
import type { ConsoleRoute } from "../../route.js";
import { ageOf, money, operatorRoute, type Refusal, refusalOf, type SignedIn, workPage } from "../operator-call.js";
import { merchantNamed, Names, transferSandbox } from "../directory.js";
import { sandboxFilter } from "../../shared/mode.js";

/** How many items a queue count reads at most (one page): beyond it the page says "N+". */
const QUEUE_READ = 500;
/** Today's deposits and withdrawals are read page by page up to this many; beyond it the totals say "at least". */
const DAY_READ_PAGES = 20;
const DAY_PAGE = 100;

interface Queue {
  key: TextKey;
  href?: string;
  count: number | undefined;
  more: boolean;
  oldest: Timestamp | undefined;
  failed?: string;
}

interface MerchantDay {
  merchantId: string;
  currency: string;
  count: number;
  completed: number;
  final: number;
  volume: bigint;
}

/** Today in Türkiye's time (UTC+3), from its midnight. */
function todayStart(now: Date): Date {
  const local = new Date(now.getTime() + 3 * 3600_000);
  return new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - 3 * 3600_000);
}

const oldestOf = (stamps: Array<Timestamp | undefined>) =>
  stamps.reduce<Timestamp | undefined>((a, b) => (!b ? a : !a || timestampDate(b) < timestampDate(a) ? b : a), undefined);

async function queue(who: SignedIn, key: TextKey, href: string | undefined, read: () => Promise<{ stamps: Array<Timestamp | undefined>; more: boolean }>): Promise<Queue> {
  try {
    const { stamps, more } = await read();
    return { key, ...(href ? { href } : {}), count: stamps.length, more, oldest: oldestOf(stamps) };
  } catch (err) {
    return { key, count: undefined, more: false, oldest: undefined, failed: refusalOf(err, who.t).message };
  }
}

/**
 * The queues of the mode shown: transfers by their receiving account's kind, withdrawals by the
 * payout service's sandbox filter, failed callbacks by their merchant's mode now (an event carries
 * none of its own). Approvals, transfer returns and withheld credits are counted as they come.
 */
async function queues(deps: ConsoleContext, who: SignedIn, names: Promise<Names>, sandbox: boolean): Promise<Queue[]> {
  const deposits = () => who.client(DepositService);
  const transfers = async (request: { reviewOnly?: boolean; includeReview?: boolean }) => {
    const [page, n] = await Promise.all([deposits().listUnmatchedTransfers({ ...request, limit: QUEUE_READ }), names]);
    await n.ensure({ ibans: page.transfers.map((t) => t.iban) });
    const mine = page.transfers.filter((t) => (transferSandbox(n, t) ?? false) === sandbox);
    return { stamps: mine.map((t) => t.reportedAt), more: page.nextCursor !== "" };
  };
  return Promise.all([
    queue(who, "home.queue.review", "/transfers", () => transfers({ reviewOnly: true })),
    queue(who, "home.queue.unmatched", "/transfers", () => transfers({ includeReview: false })),
    queue(who, "home.queue.withdrawals", "/withdrawals/awaiting", async () => {
      const page = await who.client(PayoutService).listWithdrawals({ allMerchants: true, awaitingOperator: true, sandbox, limit: 100 });
      return { stamps: page.withdrawals.map((w) => w.createdAt), more: page.nextCursor !== "" };
    }),
    queue(who, "home.queue.transferReturns", "/transfer-returns", async () => {
      const page = await who.client(PayoutService).listTransferReturns({ awaitingOperator: true, limit: 100 });
      return { stamps: page.transferReturns.map((r) => r.createdAt), more: page.nextCursor !== "" };
    }),
    queue(who, "home.queue.withheldCredits", "/withheld-credits", async () => {
      const page = await who.client(PayoutService).listWithheldCredits({ status: WithheldCreditStatus.OPEN, limit: 100 });
      return { stamps: page.credits.map((c) => c.createdAt), more: page.nextCursor !== "" };
    }),
    queue(who, "home.queue.callbacks", "/events?delivery=failed", async () => {
      const [page, n] = await Promise.all([who.client(CallbackService).listEvents({ allMerchants: true, deliveryStatus: DeliveryStatus.FAILED, limit: 100 }), names]);
      await n.ensure({ merchants: page.events.map((e) => e.merchantId) });
      const mine = page.events.filter((e) => (n.merchant(e.merchantId)?.sandbox ?? false) === sandbox);
      return { stamps: mine.map((e) => e.createdAt), more: page.nextCursor !== "" };
    }),
    // The five services' approvals and, for an admin, the console's account changes: the inbox's count.
    queue(who, "home.queue.approvals", "/approvals", () => waitingStamps(deps, who)),
  ]);
}

type DayItem = { merchantId: string; currency: string; amount: bigint; completed: boolean; final: boolean };

function summarise(items: DayItem[]): MerchantDay[] {
  const by = new Map<string, MerchantDay>();
  for (const item of items) {
    const key = `${item.merchantId}/${item.currency}`;
    const day = by.get(key) ?? { merchantId: item.merchantId, currency: item.currency, count: 0, completed: 0, final: 0, volume: 0n };
    day.count += 1;
    if (item.final) day.final += 1;
    if (item.completed) {
      day.completed += 1;
      day.volume += item.amount;
    }
    by.set(key, day);
  }
  return [...by.values()].sort((a, b) => (b.volume > a.volume ? 1 : b.volume < a.volume ? -1 : a.merchantId.localeCompare(b.merchantId)));
}

async function readDay<T>(fetch: (cursor: string) => Promise<{ items: T[]; next: string }>): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  let cursor = "";
  for (let i = 0; i < DAY_READ_PAGES; i++) {
    const page = await fetch(cursor);
    items.push(...page.items);
    if (!page.next) return { items, complete: true };
    cursor = page.next;
  }
  return { items, complete: false };
}

type Day = { items: DayItem[]; complete: boolean } | Refusal;

/** Today's deposits and withdrawals of the mode shown (the services' sandbox filter), read at once. */
function readToday(who: SignedIn, from: Date, sandbox: boolean): Promise<[Day, Day]> {
  const createdFrom = timestampFromDate(from);
  return Promise.all([
    readDay((cursor) =>
      who
        .client(DepositService)
        .listDeposits({ allMerchants: true, createdFrom, sandbox, limit: DAY_PAGE, cursor })
        .then((p) => ({ items: p.deposits.map((d) => ({ merchantId: d.merchantId, currency: d.currency, amount: d.amount, completed: d.status === DepositStatus.COMPLETED, final: d.status !== DepositStatus.PENDING })), next: p.nextCursor })),
    ).catch((err: unknown) => refusalOf(err, who.t)),
    readDay((cursor) =>
      who
        .client(PayoutService)
        .listWithdrawals({ allMerchants: true, createdFrom, sandbox, limit: DAY_PAGE, cursor })
        .then((p) => ({
          items: p.withdrawals.map((w) => ({ merchantId: w.merchantId, currency: w.currency, amount: w.amount, completed: w.status === WithdrawalStatus.COMPLETED, final: w.status !== WithdrawalStatus.PENDING && w.status !== WithdrawalStatus.PROCESSING })),
          next: p.nextCursor,
        })),
    ).catch((err: unknown) => refusalOf(err, who.t)),
  ]);
}

/** A horizontal bar per merchant: the day's completed volume, drawn on the server (no script, nothing fetched). */
function volumeChart(who: SignedIn, names: Names, id: string, title: string, days: MerchantDay[]): SafeHtml | null {
  const shown = days.filter((d) => d.volume > 0n).slice(0, 10);
  if (shown.length === 0) return null;
  const max = shown.reduce((m, d) => (d.volume > m ? d.volume : m), 1n);
  const row = 28;
  const height = shown.length * row + 8;
  const bars = shown.map((d, i) => {
    const width = Math.max(2, Math.round((Number(d.volume) / Number(max)) * 360));
    const y = i * row + 4;
    return html`<g><text x="0" y="${y + 17}" font-size="12" fill="#1a1a1a">${(names.merchant(d.merchantId)?.name ?? d.merchantId).slice(0, 24)}</text><rect x="190" y="${y}" width="${width}" height="20" fill="#1f3a5f"></rect><text x="${196 + width}" y="${y + 15}" font-size="12" fill="#1a1a1a">${money(d.volume, d.currency, who.lang)}</text></g>`;
  });
  return html`<figure><svg role="img" aria-labelledby="${`${id}-title`}" viewBox="0 0 720 ${height}" width="100%" preserveAspectRatio="xMinYMin meet"><title id="${`${id}-title`}">${title}</title>${bars}</svg><figcaption class="hint">${who.t("home.chartNote")}</figcaption></figure>`;
}

function dayTable(who: SignedIn, names: Names, caption: string, days: MerchantDay[], complete: boolean): SafeHtml {
  if (days.length === 0) return html`<p>${who.t("home.nothingToday")}</p>`;
  return html`<table><caption>${caption}${complete ? null : html` (${who.t("home.partial", { n: DAY_READ_PAGES * DAY_PAGE })})`}</caption>
<thead><tr><th scope="col">${who.t("reconciliation.merchant")}</th><th scope="col" class="num">${who.t("home.count")}</th><th scope="col" class="num">${who.t("home.volume")}</th><th scope="col" class="num">${who.t("home.successRate")}</th></tr></thead>
<tbody>${days.map((d) => html`<tr><th scope="row">${merchantNamed(names, d.merchantId)}</th><td class="num">${d.count}</td><td class="num">${money(d.volume, d.currency, who.lang)}</td><td class="num">${d.final > 0 ? `${Math.round((d.completed / d.final) * 100)}%` : "—"}</td></tr>`)}</tbody></table>`;
}

/**
 * GET /: the day at a glance — today's deposits and withdrawals per merchant (count, completed
 * volume, success rate of those already final, and a bar chart), and the queues that wait for
 * people with the age of their oldest item. Each number comes from its service, for this
 * operator: a part their role may not read says so in its place.
 */
export function homePages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    operatorRoute(deps, { method: "GET", path: "/" }, async (ctx, who) => {
      const now = deps.clock.now();
      const sandbox = sandboxFilter(ctx.state.mode);
      const names = Names.of(deps, who);
      const [waiting, [depositDay, withdrawalDay], n] = await Promise.all([queues(deps, who, names, sandbox), readToday(who, todayStart(now), sandbox), names]);
      await n.ensure({ merchants: [depositDay, withdrawalDay].flatMap((day) => ("items" in day ? day.items.map((i) => i.merchantId) : [])) });
      const queueRows = waiting.map(
        (q) => html`<tr><th scope="row">${q.href ? html`<a href="${q.href}">${who.t(q.key)}</a>` : who.t(q.key)}</th>
<td class="num">${q.failed ? html`<span class="bad">${q.failed}</span>` : `${q.count ?? 0}${q.more ? "+" : ""}`}</td>
<td>${q.oldest ? ageOf(q.oldest, now, who.t) : "—"}</td></tr>`,
      );
      const today = new Date(todayStart(now).getTime() + 3 * 3600_000).toISOString().slice(0, 10);
      const heading = (key: TextKey) => `${who.t(key)} · ${who.t(sandbox ? "kind.sandbox" : "kind.live")}`;
      const daySection = (titleKey: TextKey, chartKey: TextKey, id: string, day: Day, listPath: string, listKey: TextKey) => {
        if ("message" in day) return html`<h2>${heading(titleKey)}</h2><p class="bad">${day.message}</p>`;
        const days = summarise(day.items);
        const all = html`<p><a href="${`${listPath}?from=${today}`}">${who.t(listKey)}</a></p>`;
        return html`<h2>${heading(titleKey)}</h2>${dayTable(who, n, who.t(titleKey), days, day.complete)}${volumeChart(who, n, id, who.t(chartKey), days)}${all}`;
      };
      workPage(ctx, who, {
        title: who.t("home.title"),
        body: html`<p>${who.t("home.intro", { name: who.operator.displayName, role: who.operator.role })}</p>
<table><caption>${heading("home.queues")}</caption>
<thead><tr><th scope="col">${who.t("home.queue")}</th><th scope="col" class="num">${who.t("home.count")}</th><th scope="col">${who.t("home.oldest")}</th></tr></thead>
<tbody>${queueRows}</tbody></table>
${daySection("home.deposits", "home.depositChart", "deposit-chart", depositDay, "/deposits", "home.allDeposits")}
${daySection("home.withdrawals", "home.withdrawalChart", "withdrawal-chart", withdrawalDay, "/withdrawals", "home.allWithdrawals")}
<p><a href="/reconciliation">${who.t("home.reconcile")}</a></p>`,
      });
    }),
  ];
}
