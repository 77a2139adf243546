import { PassThrough } from "node:stream";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { stringify } from "csv-stringify";
import type { AuditRecord } from "@payments/contracts/operator";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { cursorParam, operatorRoute, queryText, refusalAlert, type SignedIn, timeOf, workPage } from "../operator-call.js";
import { outcomeText, roleReasonText, roleText, rpcText, serviceText } from "../../shared/service-texts.js";
import { decodeCursor, mergedAuditPage, type AuditFilters } from "./merged-audit.js";
import { actorNamed, merchantNamed, Names } from "../directory.js";

const PAGE_SIZE = 50;
const EXPORT_PAGE = 500;

/** `datetime-local` values are Türkiye's time (UTC+3 all year since 2016), as the page says. */
function localTime(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return undefined;
  const date = new Date(`${value.length === 16 ? `${value}:00` : value}+03:00`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function filtersOf(ctx: ConsoleContextKoa): { filters: AuditFilters; raw: Record<string, string>; invalid: string[] } {
  const raw = { actor: queryText(ctx.query.actor), target: queryText(ctx.query.target), since: queryText(ctx.query.since, 19), until: queryText(ctx.query.until, 19) };
  const since = raw.since ? localTime(raw.since) : undefined;
  const until = raw.until ? localTime(raw.until) : undefined;
  const invalid = [raw.since && !since ? "since" : "", raw.until && !until ? "until" : ""].filter(Boolean);
  return { filters: { actor: raw.actor, targetId: raw.target, since, until }, raw, invalid };
}

function query(raw: Record<string, string>, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...raw, ...extra })) if (v) params.set(k, v);
  const text = params.toString();
  return text ? `?${text}` : "";
}

function filterForm(who: SignedIn, raw: Record<string, string>, invalid: string[]): SafeHtml {
  const err = (name: string) => (invalid.includes(name) ? who.t("audit.badTime") : undefined);
  return html`<form method="get" action="/audit" class="filters" role="search" aria-label="${who.t("audit.search")}">
<div>${field({ name: "actor", label: who.t("audit.actor"), type: "search", value: raw.actor ?? "" })}</div>
<div>${field({ name: "target", label: who.t("audit.target"), type: "search", value: raw.target ?? "" })}</div>
<div>${field({ name: "since", label: who.t("audit.since"), type: "datetime-local", value: raw.since ?? "", error: err("since") })}</div>
<div>${field({ name: "until", label: who.t("audit.until"), type: "datetime-local", value: raw.until ?? "", error: err("until") })}</div>
<div><button type="submit">${who.t("audit.searchButton")}</button></div>
</form>
<p class="hint">${who.t("audit.timeHint")}</p>`;
}

/** One audit row: the service, the role, the operation and the outcome in the page's language . */
/** The ids a record names, a merchant's by name with its id beside it. */
function targetsNamed(names: Names, ids: string[]): SafeHtml {
  return html`${ids.map((id, i) => html`${i > 0 ? ", " : null}${names.merchant(id) ? merchantNamed(names, id) : id}`)}`;
}

function recordRow(who: SignedIn, names: Names, r: AuditRecord): SafeHtml {
  const lang = who.lang;
  return html`<tr>
<td>${timeOf(r.at, lang)}</td>
<td>${serviceText(lang, r.service)}</td>
<td>${actorNamed(names, r.actor)}${r.role ? html` <span class="hint">(${roleText(lang, r.role)})</span>` : null}${r.maker ? html`<br><span class="hint">${who.t("audit.askedBy", { maker: names.operator(r.maker) ? `${names.operator(r.maker)} (${r.maker})` : r.maker })}</span>` : null}</td>
<td>${rpcText(lang, r.rpc)}</td>
<td>${targetsNamed(names, r.targetIds)}</td>
<td>${r.reason ? roleReasonText(lang, r.reason) : "—"}</td>
<td class="${r.outcome === "ok" ? "ok" : "bad"}">${outcomeText(lang, r.outcome)}</td>
<td>${r.approvalId ? html`<a href="${`/approvals/${r.service}/${r.approvalId}`}">${r.approvalId}</a>` : "—"}</td>
</tr>`;
}

/** A spreadsheet must not run a cell: text that starts like a formula is kept as text. */
function cell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

const CSV_COLUMNS = ["at", "service", "actor", "actor_kind", "role", "maker", "rpc", "target_ids", "reason", "outcome", "approval_id", "request_id", "request_json", "before_json", "after_json"];

function csvRow(r: AuditRecord): string[] {
  return [
    r.at ? timestampDate(r.at).toISOString() : "",
    r.service,
    r.actor,
    r.actorKind,
    r.role,
    r.maker,
    r.rpc,
    r.targetIds.join(" "),
    r.reason,
    r.outcome,
    r.approvalId,
    r.requestId,
    r.requestJson,
    r.beforeJson,
    r.afterJson,
  ].map(cell);
}

/**
 * The audit across the five services (each keeps its own), newest first, searched by actor,
 * target id and time, paged by a cursor that remembers where each service's list was; and the
 * same as CSV (`/audit.csv`, every matching record, streamed).
 */
export function auditPages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    operatorRoute(deps, { method: "GET", path: "/audit" }, async (ctx, who) => {
      const { filters, raw, invalid } = filtersOf(ctx);
      const title = who.t("audit.title");
      if (invalid.length > 0) return workPage(ctx, who, { title, body: filterForm(who, raw, invalid) }, 400);
      const cursorText = cursorParam(ctx.query.cursor);
      const [page, read] = await Promise.all([mergedAuditPage(who, filters, decodeCursor(cursorText), PAGE_SIZE, deps.db), Names.of(deps, who)]);
      const names = await read.ensure({ actors: page.records.flatMap((r) => [r.actor, r.maker]) });
      const table =
        page.records.length === 0
          ? html`<p>${who.t("audit.empty")}</p>`
          : html`<table><caption>${who.t("audit.caption")}</caption>
<thead><tr><th scope="col">${who.t("audit.at")}</th><th scope="col">${who.t("approvals.service")}</th><th scope="col">${who.t("audit.actor")}</th><th scope="col">${who.t("audit.rpc")}</th><th scope="col">${who.t("audit.target")}</th><th scope="col">${who.t("transfer.decisionReason")}</th><th scope="col">${who.t("audit.outcome")}</th><th scope="col">${who.t("approvals.id")}</th></tr></thead>
<tbody>${page.records.map((r) => recordRow(who, names, r))}</tbody></table>`;
      const pager = html`<nav aria-label="${who.t("pager.label")}"><ul>
${cursorText ? html`<li><a href="${`/audit${query(raw)}`}">${who.t("pager.first")}</a></li>` : null}
${page.nextCursor ? html`<li><a rel="next" href="${`/audit${query(raw, { cursor: page.nextCursor })}`}">${who.t("pager.next")}</a></li>` : null}
<li><a href="${`/audit.csv${query(raw)}`}" download>${who.t("audit.csv")}</a></li>
</ul></nav>`;
      const status = page.failures.length === 5 ? (page.failures[0]?.refusal.status ?? 200) : 200;
      workPage(ctx, who, { title, body: html`${filterForm(who, raw, [])}${page.failures.map((f) => alert(`${serviceText(who.lang, f.service)}: ${f.refusal.message}`))}${table}${pager}` }, status);
    }),
    operatorRoute(deps, { method: "GET", path: "/audit.csv" }, async (ctx, who) => {
      const { filters, invalid } = filtersOf(ctx);
      if (invalid.length > 0) return workPage(ctx, who, { title: who.t("audit.title"), body: alert(who.t("audit.badTime")) ?? html`` }, 400);
      // The first page is read before answering, so a refusal (every service) is a page, not a broken file.
      const first = await mergedAuditPage(who, filters, undefined, EXPORT_PAGE, deps.db);
      if (first.failures.length === 5) {
        const refusal = first.failures[0]!.refusal;
        return workPage(ctx, who, { title: who.t("audit.title"), body: refusalAlert(refusal) }, refusal.status);
      }
      const csv = stringify({ header: true, columns: CSV_COLUMNS, record_delimiter: "\r\n" });
      const out = new PassThrough();
      csv.pipe(out);
      ctx.type = "text/csv; charset=utf-8";
      ctx.attachment("audit.csv");
      ctx.body = out;
      const write = async () => {
        let page = first;
        for (;;) {
          for (const r of page.records) {
            if (!csv.write(csvRow(r))) await new Promise((resolve) => csv.once("drain", resolve));
          }
          if (!page.nextCursor) break;
          page = await mergedAuditPage(who, filters, decodeCursor(page.nextCursor), EXPORT_PAGE, deps.db);
        }
        csv.end();
      };
      // Read-only: a failure midway ends the download broken (the client sees it cut), nothing else.
      void write().catch((err: unknown) => {
        deps.logger.warn({ err }, "audit export failed midway");
        out.destroy(err instanceof Error ? err : new Error("audit export failed"));
      });
    }),
  ];
}
