import { LatePaymentRule, MerchantService, MerchantStatus, OverpaymentRule, UnderpaymentRule, type Merchant } from "@payments/contracts/merchant";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { TextKey } from "../texts/index.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { inviteUserForm } from "./invite-user.js";
import { balanceTexts } from "../balances/texts.js";
import { csrfField, cursorParam, ID_PATTERN, isOneOf, linkTo, notFoundPage, operatorRoute, readOne, type Refusal, refusalOf, scrollingTable, seeOther, type SignedIn, timeOf, waitingForApproval, workPage } from "../operator-call.js";
import { ipList } from "../../shared/params.js";

const PAGE_SIZE = 50;

const ACTIONS = ["rotate-secret", "rotate-webhook-secret", "allowed-ips", "callback-url", "display-name", "status", "sandbox", "rate-limit", "payment-rules"] as const;
type Action = (typeof ACTIONS)[number];
const isAction = (v: unknown): v is Action => isOneOf(ACTIONS, v);

const UNDER: Record<string, UnderpaymentRule> = { review: UnderpaymentRule.REVIEW, complete: UnderpaymentRule.COMPLETE };
const OVER: Record<string, OverpaymentRule> = { complete: OverpaymentRule.COMPLETE, review: OverpaymentRule.REVIEW };
const LATE: Record<string, LatePaymentRule> = { review: LatePaymentRule.REVIEW, complete: LatePaymentRule.COMPLETE, return: LatePaymentRule.RETURN };
const RULE_KEYS: Record<string, TextKey> = { review: "merchant.rule.review", complete: "merchant.rule.complete", return: "merchant.rule.return" };

const nameOf = <T>(table: Record<string, T>, value: T) => Object.keys(table).find((k) => table[k] === value) ?? "";

/** The API key is how a merchant is told apart in logs: shown whole once, at creation; its start after that. */
function maskedKey(key: string): string {
  return key.length > 10 ? `${key.slice(0, 8)}…` : "…";
}


function statusText(who: SignedIn, m: Merchant): string {
  return m.status === MerchantStatus.ACTIVE ? who.t("merchant.active") : m.status === MerchantStatus.DISABLED ? who.t("merchant.disabled") : who.t("deposit.status.unknown");
}

function createForm(who: SignedIn, form: Record<string, string>, refusal?: Refusal): SafeHtml | null {
  if (!roleAtLeast(who.operator.role, "admin")) return null;
  const err = (...names: string[]) => (refusal?.field && names.includes(refusal.field) ? refusal.message : undefined);
  return html`<form method="post" action="/merchants" class="card" aria-labelledby="h-create">
<h2 id="h-create">${who.t("merchants.create")}</h2>${csrfField(who)}
${field({ id: "create-name", name: "name", label: who.t("merchant.name"), required: true, value: form.name ?? "", error: err("name") })}
${field({ id: "create-display", name: "displayName", label: who.t("merchant.displayName"), value: form.displayName ?? "", hint: who.t("merchant.displayNameHint"), error: err("display_name") })}
${field({ id: "create-callback", name: "callbackUrl", label: who.t("merchant.callbackUrl"), value: form.callbackUrl ?? "", error: err("callback_url") })}
<label for="create-ips">${who.t("merchant.allowedIps")}</label><p class="hint" id="create-ips-hint">${who.t("merchant.allowedIpsHint")}</p>
<textarea id="create-ips" name="allowedIps" aria-describedby="create-ips-hint">${form.allowedIps ?? ""}</textarea>
<label for="create-kind">${who.t("deposit.kind")}</label>
<select id="create-kind" name="kind"><option value="sandbox"${form.kind !== "live" ? html` selected` : null}>${who.t("kind.sandbox")}</option><option value="live"${form.kind === "live" ? html` selected` : null}>${who.t("kind.live")}</option></select>
<button type="submit">${who.t("merchants.create")}</button>
</form>`;
}

interface DetailState {
  action?: Action | undefined;
  refusal?: Refusal | undefined;
  form?: Record<string, string> | undefined;
}

function select(id: string, name: string, label: string, options: Array<[string, string]>, chosen: string): SafeHtml {
  return html`<label for="${id}">${label}</label><select id="${id}" name="${name}">${options.map(([v, l]) => html`<option value="${v}"${v === chosen ? html` selected` : null}>${l}</option>`)}</select>`;
}

function adminForms(who: SignedIn, m: Merchant, state: DetailState): SafeHtml | null {
  // Offered to admins only as a convenience: the merchant service decides (and refuses).
  if (!roleAtLeast(who.operator.role, "admin")) return null;
  const mine = (a: Action) => state.action === a;
  const err = (a: Action, ...names: string[]) => (mine(a) && state.refusal?.field && names.includes(state.refusal.field) ? state.refusal.message : undefined);
  const val = (a: Action, name: string, current: string) => (mine(a) ? (state.form?.[name] ?? current) : current);
  const form = (a: Action, titleKey: TextKey, inner: SafeHtml | null, hint?: TextKey) => html`<form method="post" action="${`/merchants/${m.id}/${a}`}" class="card" aria-labelledby="${`h-${a}`}">
<h3 id="${`h-${a}`}">${who.t(titleKey)}</h3>${csrfField(who)}${hint ? html`<p class="hint">${who.t(hint)}</p>` : null}
${inner}<button type="submit">${who.t(titleKey)}</button></form>`;
  const rules = (table: Record<string, unknown>) => Object.keys(table).map((k): [string, string] => [k, who.t(RULE_KEYS[k] ?? "merchant.rule.review")]);
  return html`<h2>${who.t("merchant.settings")}</h2><div class="actions">
${form("rotate-secret", "merchant.rotateSecret", null, "merchant.rotateSecretHint")}
${form("rotate-webhook-secret", "merchant.rotateWebhookSecret", null, "merchant.rotateWebhookSecretHint")}
${form(
  "allowed-ips",
  "merchant.setAllowedIps",
  html`<label for="set-ips">${who.t("merchant.allowedIps")}</label><p class="hint" id="set-ips-hint">${who.t("merchant.allowedIpsHint")}</p>
<textarea id="set-ips" name="allowedIps" aria-describedby="${err("allowed-ips", "allowed_ips") ? "set-ips-hint set-ips-error" : "set-ips-hint"}"${err("allowed-ips", "allowed_ips") ? html` aria-invalid="true"` : null}>${val("allowed-ips", "allowedIps", m.allowedIps.join("\n"))}</textarea>
${err("allowed-ips", "allowed_ips") ? html`<p class="error" id="set-ips-error">${err("allowed-ips", "allowed_ips")}</p>` : null}`,
)}
${form("callback-url", "merchant.setCallbackUrl", field({ id: "set-callback", name: "callbackUrl", label: who.t("merchant.callbackUrl"), value: val("callback-url", "callbackUrl", m.callbackUrl), hint: who.t("merchant.callbackUrlHint"), error: err("callback-url", "callback_url") }))}
${form("display-name", "merchant.setDisplayName", field({ id: "set-display", name: "displayName", label: who.t("merchant.displayName"), value: val("display-name", "displayName", m.displayName), hint: who.t("merchant.displayNameHint"), error: err("display-name", "display_name") }))}
${form("status", "merchant.setStatus", select("set-status", "status", who.t("list.status"), [["active", who.t("merchant.active")], ["disabled", who.t("merchant.disabled")]], m.status === MerchantStatus.DISABLED ? "disabled" : "active"))}
${form("sandbox", "merchant.setKind", select("set-kind", "kind", who.t("deposit.kind"), [["sandbox", who.t("kind.sandbox")], ["live", who.t("kind.live")]], m.sandbox ? "sandbox" : "live"), "merchant.setKindHint")}
${form(
  "rate-limit",
  "merchant.setRateLimit",
  html`${field({ id: "set-rps", name: "perSecond", label: who.t("merchant.perSecond"), inputmode: "numeric", value: val("rate-limit", "perSecond", m.rateLimitPerSecond === undefined ? "" : String(m.rateLimitPerSecond)), hint: who.t("merchant.rateHint"), error: err("rate-limit", "requests_per_second", "perSecond") })}
${field({ id: "set-burst", name: "burst", label: who.t("merchant.burst"), inputmode: "numeric", value: val("rate-limit", "burst", m.rateLimitBurst === undefined ? "" : String(m.rateLimitBurst)), hint: who.t("merchant.burstHint"), error: err("rate-limit", "burst") })}`,
)}
${form(
  "payment-rules",
  "merchant.setPaymentRules",
  html`${select("set-under", "underpayment", who.t("merchant.underpayment"), rules(UNDER), nameOf(UNDER, m.underpayment))}
${select("set-over", "overpayment", who.t("merchant.overpayment"), rules(OVER), nameOf(OVER, m.overpayment))}
${select("set-late", "latePayment", who.t("merchant.latePayment"), rules(LATE), nameOf(LATE, m.latePayment))}`,
)}
</div>`;
}

function facts(who: SignedIn, m: Merchant): SafeHtml {
  const rate = (v: number | undefined) => (v === undefined ? who.t("merchant.gatewayDefault") : v === 0 ? who.t("merchant.noLimit") : String(v));
  return html`<dl class="facts card">
<dt>${who.t("merchant.name")}</dt><dd>${m.name}</dd>
<dt>${who.t("merchant.displayName")}</dt><dd>${m.displayName}</dd>
<dt>${who.t("list.status")}</dt><dd>${statusText(who, m)}</dd>
<dt>${who.t("deposit.kind")}</dt><dd>${m.sandbox ? who.t("kind.sandbox") : who.t("kind.live")}</dd>
<dt>${who.t("merchant.apiKey")}</dt><dd><code>${maskedKey(m.apiKey)}</code> <span class="hint">${who.t("merchant.apiKeyMasked")}</span></dd>
<dt>${who.t("merchant.allowedIps")}</dt><dd>${m.allowedIps.length > 0 ? m.allowedIps.join(", ") : who.t("merchant.noIps")}</dd>
<dt>${who.t("merchant.callbackUrl")}</dt><dd>${m.callbackUrl ? html`<code>${m.callbackUrl}</code>` : "—"}</dd>
<dt>${who.t("merchant.perSecond")}</dt><dd>${rate(m.rateLimitPerSecond)}</dd>
<dt>${who.t("merchant.burst")}</dt><dd>${rate(m.rateLimitBurst)}</dd>
<dt>${who.t("merchant.underpayment")}</dt><dd>${who.t(RULE_KEYS[nameOf(UNDER, m.underpayment)] ?? "deposit.status.unknown")}</dd>
<dt>${who.t("merchant.overpayment")}</dt><dd>${who.t(RULE_KEYS[nameOf(OVER, m.overpayment)] ?? "deposit.status.unknown")}</dd>
<dt>${who.t("merchant.latePayment")}</dt><dd>${who.t(RULE_KEYS[nameOf(LATE, m.latePayment)] ?? "deposit.status.unknown")}</dd>
<dt>${who.t("list.created")}</dt><dd>${timeOf(m.createdAt, who.lang)}</dd>
</dl>
<table><caption>${who.t("merchant.secrets")}</caption><thead><tr><th scope="col">${who.t("merchant.secretId")}</th><th scope="col">${who.t("list.created")}</th><th scope="col">${who.t("merchant.secretExpires")}</th><th scope="col">${who.t("merchant.secretValid")}</th></tr></thead>
<tbody>${m.secrets.map((s) => html`<tr><td><code>${s.id}</code></td><td>${timeOf(s.createdAt, who.lang)}</td><td>${timeOf(s.expiresAt, who.lang) ?? "—"}</td><td>${s.valid ? who.t("merchant.yes") : who.t("merchant.no")}</td></tr>`)}</tbody></table>`;
}

/** A page that shows a secret: once, never cached, never again (the service keeps only what verifies it). */
export function secretPage(ctx: ConsoleContextKoa, who: SignedIn, title: string, m: Merchant, secrets: Array<[TextKey, string]>, status = 200, banner: SafeHtml | null = null): void {
  ctx.set("Cache-Control", "no-store");
  workPage(
    ctx,
    who,
    {
      title,
      body: html`${banner}<div class="notice" role="status">${who.t("merchant.secretOnce")}</div>
<dl class="facts card">${secrets.map(([key, value]) => html`<dt>${who.t(key)}</dt><dd><code>${value}</code></dd>`)}</dl>
<p><a href="${`/merchants/${m.id}`}">${who.t("merchant.toMerchant", { name: m.name })}</a></p>`,
    },
    status,
  );
}

function optionalCount(text: string | undefined): number | undefined | "bad" {
  const trimmed = (text ?? "").trim();
  if (!trimmed) return undefined;
  return /^\d{1,9}$/.test(trimmed) ? Number(trimmed) : "bad";
}

/** What a merchant's creation shows, once: its id, API key, API secret and webhook secret. */
export function createdMerchantSecrets(m: Merchant, apiSecret: string, webhookSecret: string): Array<[TextKey, string]> {
  return [
    ["merchant.id", m.id],
    ["merchant.apiKey", m.apiKey],
    ["merchant.apiSecret", apiSecret],
    ["merchant.webhookSecret", webhookSecret],
  ];
}

/** The answer to a live merchant asked for: it waits for a second admin, who is shown its secrets on approving. */
function liveMerchantWaiting(who: SignedIn, approvalId: string): SafeHtml {
  return html`<div class="notice" role="status">${who.t("merchants.liveWaiting")} <a href="${`/approvals/merchant/${approvalId}`}">${who.t("call.approvalLink", { id: approvalId })}</a></div>`;
}

/**
 * Merchants: the list (paged by the service's token), creating one (its API key, secret and
 * webhook secret shown once, on the answer's page), and one merchant with the admin's settings
 * the merchant service offers. The service decides who may (admin) and what needs a second
 * admin (a switch to live).
 */
export function merchantPages(deps: ConsoleContext): ConsoleRoute[] {
  const showList = async (ctx: ConsoleContextKoa, who: SignedIn, form: Record<string, string>, refusal?: Refusal, status = 200, banner: SafeHtml | null = null) => {
    const cursor = cursorParam(ctx.query.cursor);
    let list: SafeHtml;
    try {
      const res = await who.client(MerchantService).listMerchants({ pageSize: PAGE_SIZE, pageToken: cursor });
      list =
        res.merchants.length === 0
          ? html`<p>${who.t("list.empty")}</p>`
          : html`${scrollingTable(
              who.t("merchants.caption"),
              html`<table><caption>${who.t("merchants.caption")}</caption>
<thead><tr><th scope="col">${who.t("merchant.name")}</th><th scope="col">${who.t("merchant.id")}</th><th scope="col">${who.t("list.status")}</th><th scope="col">${who.t("deposit.kind")}</th><th scope="col">${who.t("merchant.callbackUrl")}</th><th scope="col">${who.t("list.created")}</th></tr></thead>
<tbody>${res.merchants.map((m) => html`<tr><td><a href="${`/merchants/${m.id}`}">${m.name}</a></td><td><code class="id">${m.id}</code></td><td>${statusText(who, m)}</td><td>${m.sandbox ? who.t("kind.sandbox") : who.t("kind.live")}</td><td>${m.callbackUrl || "—"}</td><td>${timeOf(m.createdAt, who.lang)}</td></tr>`)}</tbody></table>`,
            )}
<nav aria-label="${who.t("pager.label")}"><ul>${cursor ? html`<li><a href="/merchants">${who.t("pager.first")}</a></li>` : null}${res.nextPageToken ? html`<li><a href="${linkTo("/merchants", { cursor: res.nextPageToken })}" rel="next">${who.t("pager.next")}</a></li>` : null}</ul></nav>`;
    } catch (err) {
      const r = refusalOf(err, who.t);
      list = alert(r.message) ?? html``;
      if (status === 200) status = r.status;
    }
    workPage(ctx, who, { title: who.t("merchants.title"), body: html`${banner}${refusal ? alert(refusal.message) : null}${list}${createForm(who, form, refusal)}` }, status);
  };

  const showDetail = async (ctx: ConsoleContextKoa, who: SignedIn, id: string, state: DetailState, banner: SafeHtml | null, status = 200) => {
    const back = html`<p><a href="/merchants">${who.t("merchants.back")}</a></p>`;
    const m = await readOne(ctx, who, { title: who.t("merchant.title", { name: id }), back, id }, async () => (await who.client(MerchantService).getMerchant({ merchantId: id })).merchant);
    if (!m) return;
    workPage(
      ctx,
      who,
      {
        title: who.t("merchant.title", { name: m.name }),
        body: html`${banner}${state.refusal && !state.refusal.approvalId ? alert(state.refusal.message) : null}
<p><a href="/merchants">${who.t("merchants.back")}</a> · <a href="${linkTo("/deposits", { merchant: m.id })}">${who.t("nav.deposits")}</a> · <a href="${linkTo("/withdrawals", { merchant: m.id })}">${who.t("nav.withdrawals")}</a> · <a href="${linkTo("/events", { merchant: m.id })}">${who.t("nav.events")}</a> · <a href="${`/merchants/${m.id}/balance`}">${balanceTexts(who.lang, "link")}</a></p>
${facts(who, m)}
${adminForms(who, m, state)}
${inviteUserForm(who, m.id)}`,
      },
      status,
    );
  };

  return [
    operatorRoute(deps, { method: "GET", path: "/merchants" }, async (ctx, who) => {
      // After a live merchant was asked for (POST /merchants): it waits for a second admin.
      const approval = cursorParam(ctx.query.approval);
      await showList(ctx, who, {}, undefined, 200, approval ? liveMerchantWaiting(who, approval) : null);
    }),
    operatorRoute(deps, { method: "POST", path: "/merchants" }, async (ctx, who) => {
      const form = ctx.state.form ?? {};
      const name = (form.name ?? "").trim();
      if (!name) return showList(ctx, who, form, { status: 400, message: who.t("merchants.nameRequired"), reason: "VALIDATION_ERROR", field: "name", approvalId: undefined }, 400);
      try {
        const res = await who.client(MerchantService).createMerchant({ name, displayName: (form.displayName ?? "").trim(), callbackUrl: (form.callbackUrl ?? "").trim(), allowedIps: ipList(form.allowedIps ?? ""), sandbox: form.kind !== "live" });
        const m = res.merchant!;
        secretPage(ctx, who, who.t("merchants.created", { name: m.name }), m, createdMerchantSecrets(m, res.apiSecret, res.webhookSecret), 201);
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        if (refusal.approvalId) return seeOther(ctx, linkTo("/merchants", { approval: refusal.approvalId }));
        await showList(ctx, who, form, refusal, refusal.status);
      }
    }),
    operatorRoute(deps, { method: "GET", path: "/merchants/:id", ids: ["id"] }, async (ctx, who, { id }) => {
      const approval = cursorParam(ctx.query.approval);
      const done = ctx.query.done;
      await showDetail(ctx, who, id, {}, approval ? waitingForApproval(who, "merchant", approval) : isAction(done) ? notice(who.t("merchant.saved")) : null);
    }),
    operatorRoute(deps, { method: "POST", path: "/merchants/:id/:action" }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      const action = ctx.params.action;
      if (!ID_PATTERN.test(id) || !isAction(action)) return notFoundPage(ctx, who);
      const form = ctx.state.form ?? {};
      const merchants = who.client(MerchantService);
      const invalid = (field: string, key: TextKey) => showDetail(ctx, who, id, { action, form, refusal: { status: 400, message: who.t(key), reason: "VALIDATION_ERROR", field, approvalId: undefined } }, null, 400);
      try {
        switch (action) {
          case "rotate-secret": {
            const res = await merchants.rotateSecret({ merchantId: id });
            return secretPage(ctx, who, who.t("merchant.rotateSecret"), res.merchant!, [["merchant.apiSecret", res.apiSecret]]);
          }
          case "rotate-webhook-secret": {
            const res = await merchants.rotateWebhookSecret({ merchantId: id });
            return secretPage(ctx, who, who.t("merchant.rotateWebhookSecret"), res.merchant!, [["merchant.webhookSecret", res.webhookSecret]]);
          }
          case "allowed-ips":
            await merchants.setAllowedIps({ merchantId: id, allowedIps: ipList(form.allowedIps ?? "") });
            break;
          case "callback-url":
            await merchants.setCallbackUrl({ merchantId: id, callbackUrl: (form.callbackUrl ?? "").trim() });
            break;
          case "display-name":
            await merchants.setDisplayName({ merchantId: id, displayName: (form.displayName ?? "").trim() });
            break;
          case "status":
            await merchants.setStatus({ merchantId: id, status: form.status === "disabled" ? MerchantStatus.DISABLED : MerchantStatus.ACTIVE });
            break;
          case "sandbox":
            if (form.kind !== "live" && form.kind !== "sandbox") return await invalid("kind", "merchant.badKind");
            await merchants.setSandbox({ merchantId: id, sandbox: form.kind === "sandbox" });
            break;
          case "rate-limit": {
            const perSecond = optionalCount(form.perSecond);
            const burst = optionalCount(form.burst);
            if (perSecond === "bad") return await invalid("perSecond", "merchant.badCount");
            if (burst === "bad") return await invalid("burst", "merchant.badCount");
            await merchants.setRateLimit({ merchantId: id, ...(perSecond !== undefined ? { requestsPerSecond: perSecond } : {}), ...(burst !== undefined ? { burst } : {}) });
            break;
          }
          case "payment-rules": {
            const under = UNDER[form.underpayment ?? ""];
            const over = OVER[form.overpayment ?? ""];
            const late = LATE[form.latePayment ?? ""];
            await merchants.setPaymentRules({ merchantId: id, ...(under ? { underpayment: under } : {}), ...(over ? { overpayment: over } : {}), ...(late ? { latePayment: late } : {}) });
            break;
          }
        }
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        if (refusal.approvalId) return seeOther(ctx, `/merchants/${id}?approval=${encodeURIComponent(refusal.approvalId)}`);
        return showDetail(ctx, who, id, { action, form, refusal }, null, refusal.status);
      }
      seeOther(ctx, `/merchants/${id}?done=${action}`);
    }),
  ];
}
