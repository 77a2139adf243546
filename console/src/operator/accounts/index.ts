import { BankCatalogService, type Bank, type ReceivingAccount } from "@payments/contracts/bank-catalog";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { csrfField, cursorParam, linkTo, operatorRoute, queryText, type Refusal, refusalOf, seeOther, type SignedIn, timeOf, waitingForApproval, workPage } from "../operator-call.js";

/** A labelled checkbox (the label after it, as people read a checkbox). */
export function checkbox(id: string, name: string, label: string, checked: boolean): SafeHtml {
  return html`<p><input type="checkbox" id="${id}" name="${name}" value="1"${checked ? html` checked` : null}> <label for="${id}" class="inline-label">${label}</label></p>`;
}

function createForm(who: SignedIn, banks: Bank[], form: Record<string, string>, refusal?: Refusal): SafeHtml | null {
  if (!roleAtLeast(who.operator.role, "admin")) return null;
  const err = (...names: string[]) => (refusal?.field && names.includes(refusal.field) ? refusal.message : undefined);
  const posted = Object.keys(form).length > 0;
  return html`<form method="post" action="/accounts" class="card" aria-labelledby="h-create-account">
<h2 id="h-create-account">${who.t("accounts.create")}</h2>${csrfField(who)}
<p class="hint">${who.t("accounts.createHint")}</p>
<label for="account-bank">${who.t("accounts.bank")}</label>
<select id="account-bank" name="bankId" required>${banks.map((b) => html`<option value="${b.id}"${b.id === form.bankId ? html` selected` : null}>${b.name} (${b.code})</option>`)}</select>
${field({ id: "account-name", name: "accountName", label: who.t("accounts.accountName"), required: true, value: form.accountName ?? "", error: err("account_name") })}
${field({ id: "account-iban", name: "iban", label: "IBAN", required: true, value: form.iban ?? "", error: err("iban") })}
<label for="account-kind">${who.t("deposit.kind")}</label>
<select id="account-kind" name="kind"><option value="sandbox"${form.kind !== "live" ? html` selected` : null}>${who.t("kind.sandbox")}</option><option value="live"${form.kind === "live" ? html` selected` : null}>${who.t("kind.live")}</option></select>
${checkbox("account-fast", "fastEnabled", who.t("accounts.fast"), form.fastEnabled === "1")}
${checkbox("account-active", "active", who.t("accounts.active"), posted ? form.active === "1" : true)}
<button type="submit">${who.t("accounts.create")}</button>
</form>`;
}

function table(who: SignedIn, accounts: ReceivingAccount[]): SafeHtml {
  if (accounts.length === 0) return html`<p>${who.t("list.empty")}</p>`;
  const admin = roleAtLeast(who.operator.role, "admin");
  return html`<table><caption>${who.t("accounts.caption")}</caption>
<thead><tr><th scope="col">${who.t("accounts.accountName")}</th><th scope="col">IBAN</th><th scope="col">${who.t("accounts.bank")}</th><th scope="col">${who.t("deposit.kind")}</th><th scope="col">FAST</th><th scope="col">${who.t("list.status")}</th><th scope="col">${who.t("list.created")}</th>${admin ? html`<th scope="col">${who.t("accounts.change")}</th>` : null}</tr></thead>
<tbody>${accounts.map(
    (a) => html`<tr><th scope="row">${a.accountName}</th><td><code>${a.iban}</code></td><td>${a.bankName}</td><td>${a.sandbox ? who.t("kind.sandbox") : who.t("kind.live")}</td><td>${a.fastEnabled ? who.t("merchant.yes") : who.t("merchant.no")}</td><td class="${a.active ? "ok" : "bad"}">${a.active ? who.t("accounts.isActive") : who.t("accounts.isInactive")}</td><td>${timeOf(a.createdAt, who.lang)}</td>
${admin ? html`<td><form method="post" action="${`/accounts/${a.id}/active`}" class="inline">${csrfField(who)}<input type="hidden" name="active" value="${a.active ? "0" : "1"}"><button type="submit" aria-label="${`${a.active ? who.t("accounts.deactivate") : who.t("accounts.activate")}: ${a.accountName} ${a.iban}`}">${a.active ? who.t("accounts.deactivate") : who.t("accounts.activate")}</button></form></td>` : null}</tr>`,
  )}</tbody></table>`;
}

/**
 * Receiving accounts: every account (by bank and kind), a new one and activating or
 * deactivating one. The bank-catalog service decides: an admin's, and a live account that will
 * take customers' money (new and active, or active again) waits for a second admin.
 */
export function accountPages(deps: ConsoleContext): ConsoleRoute[] {
  const show = async (ctx: ConsoleContextKoa, who: SignedIn, banner: SafeHtml | null, form: Record<string, string>, refusal?: Refusal, status = 200) => {
    const bank = queryText(ctx.query.bank, 80);
    const kind = queryText(ctx.query.kind, 10);
    const catalog = who.client(BankCatalogService);
    let banks: Bank[] = [];
    let body: SafeHtml;
    try {
      banks = (await catalog.listBanks({})).banks;
      const res = await catalog.listReceivingAccounts({ bankId: bank, ...(kind === "live" ? { sandbox: false } : kind === "sandbox" ? { sandbox: true } : {}) });
      body = table(who, res.accounts);
    } catch (err) {
      const r = refusalOf(err, who.t);
      body = alert(r.message) ?? html``;
      if (status === 200) status = r.status;
    }
    const filters = html`<form method="get" action="/accounts" class="filters" role="search" aria-label="${who.t("list.search")}">
<div><label for="filter-bank">${who.t("accounts.bank")}</label><select id="filter-bank" name="bank"><option value="">${who.t("accounts.anyBank")}</option>${banks.map((b) => html`<option value="${b.id}"${b.id === bank ? html` selected` : null}>${b.name}</option>`)}</select></div>
<div><label for="filter-kind">${who.t("deposit.kind")}</label><select id="filter-kind" name="kind"><option value="">${who.t("accounts.anyKind")}</option><option value="sandbox"${kind === "sandbox" ? html` selected` : null}>${who.t("kind.sandbox")}</option><option value="live"${kind === "live" ? html` selected` : null}>${who.t("kind.live")}</option></select></div>
<div><button type="submit">${who.t("list.searchButton")}</button></div></form>`;
    workPage(ctx, who, { title: who.t("accounts.title"), body: html`${banner}${refusal && !refusal.approvalId ? alert(refusal.message) : null}<p>${who.t("accounts.intro")} <a href="/banks">${who.t("nav.banks")}</a></p>${filters}${body}${createForm(who, banks, form, refusal)}` }, status);
  };

  const answer = (ctx: ConsoleContextKoa, who: SignedIn, form: Record<string, string>, err: unknown) => {
    const refusal = refusalOf(err, who.t);
    if (refusal.approvalId) return seeOther(ctx, linkTo("/accounts", { approval: refusal.approvalId }));
    return show(ctx, who, null, form, refusal, refusal.status);
  };

  return [
    operatorRoute(deps, { method: "GET", path: "/accounts" }, async (ctx, who) => {
      const approval = cursorParam(ctx.query.approval);
      const done = queryText(ctx.query.done, 20);
      await show(ctx, who, approval ? waitingForApproval(who, "bank-catalog", approval) : done === "saved" ? notice(who.t("merchant.saved")) : null, {});
    }),
    operatorRoute(deps, { method: "POST", path: "/accounts" }, async (ctx, who) => {
      const form = ctx.state.form ?? {};
      try {
        await who.client(BankCatalogService).createReceivingAccount({
          bankId: (form.bankId ?? "").trim(),
          accountName: (form.accountName ?? "").trim(),
          iban: (form.iban ?? "").replace(/\s+/g, "").toUpperCase(),
          fastEnabled: form.fastEnabled === "1",
          active: form.active === "1",
          sandbox: form.kind !== "live",
        });
      } catch (err) {
        return answer(ctx, who, form, err);
      }
      seeOther(ctx, "/accounts?done=saved");
    }),
    operatorRoute(deps, { method: "POST", path: "/accounts/:id/active", ids: ["id"] }, async (ctx, who, { id }) => {
      const form = ctx.state.form ?? {};
      try {
        await who.client(BankCatalogService).updateReceivingAccount({ accountId: id, active: form.active === "1" });
      } catch (err) {
        return answer(ctx, who, {}, err);
      }
      seeOther(ctx, "/accounts?done=saved");
    }),
  ];
}
