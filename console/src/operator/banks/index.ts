import { BankCatalogService, type Bank, type FastSettings } from "@payments/contracts/bank-catalog";
import { majorUnits } from "@payments/kit";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { Language } from "../../shared/i18n.js";
import type { TextKey } from "../texts/index.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { checkbox } from "../accounts/index.js";
import { csrfField, minorUnits, money, operatorRoute, queryText, type Refusal, refusalOf, seeOther, type SignedIn, timeOf, workPage } from "../operator-call.js";

type Form = Record<string, string>;

/** An amount field in lira, as the bank catalog's limits are read; empty when not given. */
function amountOf(form: Form, name: string, lang: Language): bigint | undefined | "bad" {
  const text = (form[name] ?? "").trim();
  if (!text) return undefined;
  return minorUnits(text, lang) ?? "bad";
}

function bankFields(who: SignedIn, prefix: string, values: Form, refusal: Refusal | undefined, creating: boolean): SafeHtml {
  const err = (...names: string[]) => (refusal?.field && names.includes(refusal.field) ? refusal.message : undefined);
  return html`${field({ id: `${prefix}-name`, name: "name", label: who.t("banks.name"), required: creating, value: values.name ?? "", error: err("name") })}
${creating ? field({ id: `${prefix}-code`, name: "code", label: who.t("banks.code"), required: true, value: values.code ?? "", hint: who.t("banks.codeHint"), error: err("code") }) : null}
${field({ id: `${prefix}-logo`, name: "logoUrl", label: who.t("banks.logo"), value: values.logoUrl ?? "", hint: who.t("banks.logoHint"), error: err("logo_url") })}
${field({ id: `${prefix}-min`, name: "min", label: who.t("banks.min"), value: values.min ?? "", hint: who.t("banks.amountHint"), error: err("min_amount", "min") })}
${field({ id: `${prefix}-max`, name: "max", label: who.t("banks.max"), value: values.max ?? "", hint: who.t("banks.amountHint"), error: err("max_amount", "max") })}
${checkbox(`${prefix}-active`, "active", who.t("accounts.active"), values.active === "1")}`;
}

function fastForm(who: SignedIn, settings: FastSettings | undefined, form: Form | undefined, refusal: Refusal | undefined): SafeHtml {
  const current: Form = form ?? { enabled: settings?.enabled ? "1" : "", min: settings ? majorUnits(settings.minAmount) : "", max: settings ? majorUnits(settings.maxAmount) : "" };
  const err = (...names: string[]) => (refusal?.field && names.includes(refusal.field) ? refusal.message : undefined);
  const facts = settings
    ? html`<p>${settings.enabled ? who.t("banks.fastOn") : who.t("banks.fastOff")} · ${money(settings.minAmount, "TRY", who.lang)} – ${money(settings.maxAmount, "TRY", who.lang)}</p>`
    : null;
  if (!roleAtLeast(who.operator.role, "admin")) return html`<h2>${who.t("banks.fast")}</h2>${facts}`;
  return html`<h2>${who.t("banks.fast")}</h2>${facts}<form method="post" action="/banks/fast" class="card" aria-labelledby="h-fast">
<h3 id="h-fast">${who.t("banks.fastUpdate")}</h3>${csrfField(who)}
${checkbox("fast-enabled", "enabled", who.t("banks.fastEnabled"), current.enabled === "1")}
${field({ id: "fast-min", name: "min", label: who.t("banks.min"), value: current.min ?? "", hint: who.t("banks.amountHint"), error: err("min_amount", "min") })}
${field({ id: "fast-max", name: "max", label: who.t("banks.max"), value: current.max ?? "", hint: who.t("banks.amountHint"), error: err("max_amount", "max") })}
<button type="submit">${who.t("banks.fastUpdate")}</button></form>`;
}

function bankTable(who: SignedIn, banks: Bank[]): SafeHtml {
  if (banks.length === 0) return html`<p>${who.t("list.empty")}</p>`;
  return html`<table><caption>${who.t("banks.caption")}</caption>
<thead><tr><th scope="col">${who.t("banks.name")}</th><th scope="col">${who.t("banks.code")}</th><th scope="col">${who.t("list.status")}</th><th scope="col" class="num">${who.t("banks.min")}</th><th scope="col" class="num">${who.t("banks.max")}</th><th scope="col">${who.t("banks.updated")}</th></tr></thead>
<tbody>${banks.map((b) => html`<tr><th scope="row"><a href="${`/banks/${b.id}`}">${b.name}</a></th><td>${b.code}</td><td class="${b.active ? "ok" : "bad"}">${b.active ? who.t("accounts.isActive") : who.t("accounts.isInactive")}</td><td class="num">${money(b.minAmount, "TRY", who.lang)}</td><td class="num">${money(b.maxAmount, "TRY", who.lang)}</td><td>${timeOf(b.updatedAt, who.lang)}</td></tr>`)}</tbody></table>`;
}

const DONE: Record<string, TextKey> = { created: "banks.done.created", saved: "merchant.saved", fast: "banks.done.fast" };

/**
 * Banks: the catalog's banks with their default limits, a new bank, one bank's update, and the
 * FAST settings. The bank-catalog service decides (an admin's); limits are typed in lira.
 */
export function bankPages(deps: ConsoleContext): ConsoleRoute[] {
  const invalid = (who: SignedIn, field: string): Refusal => ({ status: 400, message: who.t("deposit.badAmount"), reason: "VALIDATION_ERROR", field, approvalId: undefined });

  const showList = async (ctx: ConsoleContextKoa, who: SignedIn, banner: SafeHtml | null, state: { create?: Form; fast?: Form; refusal?: Refusal } = {}, status = 200) => {
    const catalog = who.client(BankCatalogService);
    let banks: Bank[] = [];
    let settings: FastSettings | undefined;
    let failed: SafeHtml | null = null;
    try {
      [banks, settings] = await Promise.all([catalog.listBanks({}).then((r) => r.banks), catalog.getFastSettings({}).then((r) => r.settings)]);
    } catch (err) {
      const r = refusalOf(err, who.t);
      failed = alert(r.message);
      if (status === 200) status = r.status;
    }
    const createForm = roleAtLeast(who.operator.role, "admin")
      ? html`<form method="post" action="/banks" class="card" aria-labelledby="h-create-bank"><h2 id="h-create-bank">${who.t("banks.create")}</h2>${csrfField(who)}
${bankFields(who, "create", state.create ?? { active: "1" }, state.create ? state.refusal : undefined, true)}
<button type="submit">${who.t("banks.create")}</button></form>`
      : null;
    workPage(
      ctx,
      who,
      {
        title: who.t("banks.title"),
        body: html`${banner}${state.refusal ? alert(state.refusal.message) : null}${failed}<p>${who.t("banks.intro")} <a href="/accounts">${who.t("nav.accounts")}</a></p>${bankTable(who, banks)}${fastForm(who, settings, state.fast, state.fast ? state.refusal : undefined)}${createForm}`,
      },
      status,
    );
  };

  const showBank = async (ctx: ConsoleContextKoa, who: SignedIn, id: string, banner: SafeHtml | null, state: { form?: Form; refusal?: Refusal } = {}, status = 200) => {
    let bank: Bank | undefined;
    try {
      bank = (await who.client(BankCatalogService).listBanks({})).banks.find((b) => b.id === id);
    } catch (err) {
      const r = refusalOf(err, who.t);
      return workPage(ctx, who, { title: who.t("banks.title"), body: alert(r.message) ?? html`` }, r.status);
    }
    if (!bank) return workPage(ctx, who, { title: who.t("banks.title"), body: html`${alert(who.t("call.notFound", { detail: id }))}<p><a href="/banks">${who.t("banks.back")}</a></p>` }, 404);
    const b = bank;
    const values: Form = state.form ?? { name: b.name, logoUrl: b.logoUrl, min: majorUnits(b.minAmount), max: majorUnits(b.maxAmount), active: b.active ? "1" : "" };
    workPage(
      ctx,
      who,
      {
        title: who.t("banks.bankTitle", { name: b.name }),
        body: html`${banner}${state.refusal ? alert(state.refusal.message) : null}<p><a href="/banks">${who.t("banks.back")}</a> · <a href="${`/accounts?bank=${encodeURIComponent(b.id)}`}">${who.t("nav.accounts")}</a></p>
<dl class="facts card"><dt>${who.t("banks.code")}</dt><dd>${b.code}</dd><dt>${who.t("list.status")}</dt><dd>${b.active ? who.t("accounts.isActive") : who.t("accounts.isInactive")}</dd><dt>${who.t("banks.min")}</dt><dd>${money(b.minAmount, "TRY", who.lang)}</dd><dt>${who.t("banks.max")}</dt><dd>${money(b.maxAmount, "TRY", who.lang)}</dd><dt>${who.t("banks.logo")}</dt><dd>${b.logoUrl ? html`<code>${b.logoUrl}</code>` : "—"}</dd></dl>
${
  roleAtLeast(who.operator.role, "admin")
    ? html`<form method="post" action="${`/banks/${b.id}`}" class="card" aria-labelledby="h-update-bank"><h2 id="h-update-bank">${who.t("banks.update")}</h2>${csrfField(who)}
${bankFields(who, "update", values, state.refusal, false)}
<button type="submit">${who.t("banks.update")}</button></form>`
    : null
}`,
      },
      status,
    );
  };

  /** A form of the list page with limits typed in lira (a new bank, FAST's settings): judged, sent, then the list again with its refusal, or 303. */
  const limitsPost = (path: string, part: "create" | "fast", send: (who: SignedIn, form: Form, min: bigint | undefined, max: bigint | undefined) => Promise<unknown>) =>
    operatorRoute(deps, { method: "POST", path }, async (ctx, who) => {
      const form = ctx.state.form ?? {};
      const min = amountOf(form, "min", who.lang);
      const max = amountOf(form, "max", who.lang);
      if (min === "bad" || max === "bad") return showList(ctx, who, null, { [part]: form, refusal: invalid(who, min === "bad" ? "min" : "max") }, 400);
      try {
        await send(who, form, min, max);
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        return showList(ctx, who, null, { [part]: form, refusal }, refusal.status);
      }
      seeOther(ctx, `/banks?done=${part === "create" ? "created" : "fast"}`);
    });

  return [
    operatorRoute(deps, { method: "GET", path: "/banks" }, async (ctx, who) => {
      const done = DONE[queryText(ctx.query.done, 20)];
      await showList(ctx, who, done ? notice(who.t(done)) : null);
    }),
    limitsPost("/banks", "create", (who, form, min, max) =>
      who.client(BankCatalogService).createBank({ name: (form.name ?? "").trim(), code: (form.code ?? "").trim(), logoUrl: (form.logoUrl ?? "").trim(), minAmount: min ?? 0n, maxAmount: max ?? 0n, active: form.active === "1" }),
    ),
    limitsPost("/banks/fast", "fast", (who, form, min, max) =>
      who.client(BankCatalogService).updateFastSettings({ enabled: form.enabled === "1", ...(min !== undefined ? { minAmount: min } : {}), ...(max !== undefined ? { maxAmount: max } : {}) }),
    ),
    operatorRoute(deps, { method: "GET", path: "/banks/:id", ids: ["id"] }, async (ctx, who, { id }) => {
      await showBank(ctx, who, id, ctx.query.done === "saved" ? notice(who.t("merchant.saved")) : null);
    }),
    operatorRoute(deps, { method: "POST", path: "/banks/:id", ids: ["id"] }, async (ctx, who, { id }) => {
      const form = ctx.state.form ?? {};
      const min = amountOf(form, "min", who.lang);
      const max = amountOf(form, "max", who.lang);
      if (min === "bad" || max === "bad") return showBank(ctx, who, id, null, { form, refusal: invalid(who, min === "bad" ? "min" : "max") }, 400);
      const name = (form.name ?? "").trim();
      try {
        await who.client(BankCatalogService).updateBank({
          bankId: id,
          ...(name ? { name } : {}),
          logoUrl: (form.logoUrl ?? "").trim(),
          active: form.active === "1",
          ...(min !== undefined ? { minAmount: min } : {}),
          ...(max !== undefined ? { maxAmount: max } : {}),
        });
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        return showBank(ctx, who, id, null, { form, refusal }, refusal.status);
      }
      seeOther(ctx, `/banks/${id}?done=saved`);
    }),
  ];
}
