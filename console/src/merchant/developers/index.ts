import { CallbackService, TransactionType, type CallbackEvent, type SendTestEventResponse } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService, type ApiKey, type Merchant } from "@payments/contracts/merchant";
import { deliveryStatusName, deliveryStatusToProto, depositStatusName, isDeliveryStatusName } from "@payments/contracts/statuses";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { attemptErrorText } from "../../shared/service-texts.js";
import { alert, field, notice } from "../../shared/layout.js";
import { cursorParam, ID_PATTERN, ipList, linkTo, minorUnits, seeOther, timeOf } from "../../shared/params.js";
import type { MerchantRole } from "@payments/access";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa, RouteContext } from "../../state.js";
import { merchantCsrfField, merchantNotFound, merchantPage, merchantRefusal, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { findKey, KEY_ROLES, keyRoutes, keysSection, keyTextsOf, showKey } from "./keys.js";
import { developerTextsOf as textsOf, graceOf, graceSelect, secretPage, type DeveloperT as T } from "./page-parts.js";
import { developerTexts } from "./texts.js";

/**
 * Who changes the merchant's integration settings (IPs, callback URL, webhook secret, test event,
 * sandbox tools); finance and viewers see them read-only (the services refuse them anyway). API
 * keys are managed by owners, developers and finance users (keys.ts).
 */
const ACTING_ROLES = ["owner", "developer"] as const;
const EVENTS_PAGE = 50;

const acts = (who: MerchantSignedIn) => (ACTING_ROLES as readonly string[]).includes(who.user.role);


/** Whether the merchant's keys move test money or real money. */
function kindFact(t: T, m: Merchant): SafeHtml {
  return html`<dl class="facts card"><dt>${t("key.kind")}</dt><dd>${m.sandbox ? t("key.sandbox") : t("key.live")}</dd></dl>`;
}

function settingsSection(who: MerchantSignedIn, t: T, m: Merchant, form: Record<string, string>, errors: Record<string, string>): SafeHtml {
  if (!acts(who)) {
    return html`<section aria-labelledby="h-settings"><h2 id="h-settings">${t("ips.title")} · ${t("callback.title")}</h2>
<dl class="facts card"><dt>${t("ips.title")}</dt><dd>${m.allowedIps.length > 0 ? m.allowedIps.join(", ") : "—"}</dd><dt>${t("callback.label")}</dt><dd>${m.callbackUrl ? html`<code>${m.callbackUrl}</code>` : "—"}</dd></dl></section>`;
  }
  const ipsError = errors.allowedIps;
  return html`<div class="actions">
<form method="post" action="/merchant/developers/allowed-ips" class="card" aria-labelledby="h-ips"><h2 id="h-ips">${t("ips.title")}</h2>${merchantCsrfField(who)}
<label for="set-ips">${t("ips.label")}</label><p class="hint" id="set-ips-hint">${t("ips.hint")}</p>
<textarea id="set-ips" name="allowedIps" aria-describedby="${ipsError ? "set-ips-hint set-ips-error" : "set-ips-hint"}"${ipsError ? html` aria-invalid="true"` : null}>${form.allowedIps ?? m.allowedIps.join("\n")}</textarea>
${ipsError ? html`<p class="error" id="set-ips-error">${ipsError}</p>` : null}
<button type="submit">${t("ips.submit")}</button></form>
<form method="post" action="/merchant/developers/callback-url" class="card" aria-labelledby="h-callback"><h2 id="h-callback">${t("callback.title")}</h2>${merchantCsrfField(who)}
${field({ id: "set-callback", name: "callbackUrl", label: t("callback.label"), value: form.callbackUrl ?? m.callbackUrl, hint: t("callback.hint"), error: errors.callbackUrl })}
<button type="submit">${t("callback.submit")}</button></form>
<form method="post" action="/merchant/developers/rotate-webhook-secret" class="card" aria-labelledby="h-webhook"><h2 id="h-webhook">${t("webhook.title")}</h2>${merchantCsrfField(who)}
<p class="hint">${t("webhook.hint")}</p>${graceSelect(t, "grace-webhook")}<button type="submit">${t("webhook.submit")}</button></form>
<form method="post" action="/merchant/developers/test-event" class="card" aria-labelledby="h-test"><h2 id="h-test">${t("test.title")}</h2>${merchantCsrfField(who)}
<p class="hint">${t("test.hint")}</p><button type="submit">${t("test.submit")}</button></form>
</div>`;
}

function sandboxSection(who: MerchantSignedIn, t: T, m: Merchant, form: Record<string, string>, errors: Record<string, string>): SafeHtml | null {
  if (!m.sandbox) return html`<section aria-labelledby="h-sandbox"><h2 id="h-sandbox">${t("sandbox.title")}</h2><p>${t("sandbox.liveOnly")}</p></section>`;
  if (!acts(who)) return null;
  return html`<section aria-labelledby="h-sandbox"><h2 id="h-sandbox">${t("sandbox.title")}</h2><p class="hint">${t("sandbox.hint")}</p><div class="actions">
<form method="post" action="/merchant/developers/sandbox/pay" class="card">${merchantCsrfField(who)}
${field({ id: "pay-deposit", name: "depositId", label: t("sandbox.deposit"), required: true, value: form.payDeposit ?? "", error: errors.payDeposit })}
${field({ id: "pay-amount", name: "amount", label: t("sandbox.amount"), inputmode: "decimal", value: form.amount ?? "", hint: t("sandbox.amountHint"), error: errors.amount })}
${field({ id: "pay-sender", name: "senderName", label: t("sandbox.sender"), value: form.senderName ?? "", hint: t("sandbox.senderHint") })}
<button type="submit">${t("sandbox.pay")}</button></form>
<form method="post" action="/merchant/developers/sandbox/expire" class="card">${merchantCsrfField(who)}
${field({ id: "expire-deposit", name: "depositId", label: t("sandbox.deposit"), required: true, value: form.expireDeposit ?? "", error: errors.expireDeposit })}
<button type="submit">${t("sandbox.expire")}</button></form></div></section>`;
}

function testResult(t: T, res: SendTestEventResponse): SafeHtml {
  return html`<section aria-labelledby="h-test-result" class="card"><h2 id="h-test-result">${t("test.result", { id: res.eventId })}</h2>
<dl class="facts"><dt>${t("test.url")}</dt><dd><code>${res.url}</code></dd>
<dt>${t("test.delivered")}</dt><dd class="${res.delivered ? "ok" : "bad"}">${res.delivered ? t("secrets.yes") : t("secrets.no")}</dd>
<dt>${t("test.status")}</dt><dd>${res.statusCode === 0 ? t("test.noAnswer") : String(res.statusCode)}</dd>
<dt>${t("test.duration")}</dt><dd>${t("test.ms", { n: String(res.durationMs) })}</dd>
${res.error ? html`<dt>${t("test.error")}</dt><dd>${res.error}</dd>` : null}</dl>
<h3>${t("test.body")}</h3><pre>${res.responseBody}</pre></section>`;
}

function eventLink(e: CallbackEvent): SafeHtml | string {
  if (!e.transactionId || !ID_PATTERN.test(e.transactionId)) return e.transactionId || "—";
  if (e.transactionType === TransactionType.DEPOSIT) return html`<a href="${`/merchant/deposits/${e.transactionId}`}">${e.transactionId}</a>`;
  if (e.transactionType === TransactionType.WITHDRAWAL) return html`<a href="${`/merchant/withdrawals/${e.transactionId}`}">${e.transactionId}</a>`;
  return e.transactionId;
}

interface PageState {
  banner?: SafeHtml | null;
  result?: SafeHtml | null;
  form?: Record<string, string>;
  errors?: Record<string, string>;
  /** The create-a-key form as posted, and what is wrong with it. */
  keyForm?: Record<string, string>;
  keyErrors?: Record<string, string>;
}

/**
 * The Developers page (`/merchant/developers`): the API keys (keys.ts: each key's scopes, trusted
 * mark and secrets; a new key; one key's page), the IP allow-list, the callback
 * URL, the webhook secret, a test event with the receiver's answer, the event log
 * (`/merchant/developers/events`) and, for a sandbox merchant, paying or expiring a deposit.
 * Owners and developers change the settings, and finance users manage API keys; the others see
 * it read-only (and are refused by the route and by the services if they post anyway).
 */
export function merchantDeveloperPages(deps: ConsoleContext): ConsoleRoute[] {
  const show = async (ctx: ConsoleContextKoa, who: MerchantSignedIn, state: PageState, status = 200) => {
    const t = textsOf(who);
    let m: Merchant | undefined;
    let keys: ApiKey[];
    try {
      // Asked together: neither waits for the other.
      const merchants = who.client(MerchantService);
      const [got, listed] = await Promise.all([merchants.getMerchant({ merchantId: who.user.merchantId }), merchants.listApiKeys({ merchantId: who.user.merchantId })]);
      m = got.merchant;
      keys = listed.keys;
    } catch (err) {
      return merchantRefusal(ctx, who, err, { title: t("title"), active: "developers" });
    }
    if (!m) return merchantNotFound(ctx, who, "developers");
    const form = state.form ?? {};
    const errors = state.errors ?? {};
    const banner = state.banner ?? (ctx.query.done === "saved" ? notice(t("saved")) : null);
    merchantPage(
      ctx,
      who,
      {
        title: t("title"),
        active: "developers",
        body: html`${banner}${acts(who) ? null : html`<p class="notice">${(KEY_ROLES as readonly string[]).includes(who.user.role) ? t("readOnlySettings") : t("readOnly")}</p>`}${state.result ?? null}
${keysSection(who, keys, kindFact(t, m), { ...(state.keyForm ? { form: state.keyForm } : {}), ...(state.keyErrors ? { errors: state.keyErrors } : {}) })}
${settingsSection(who, t, m, form, errors)}
<p><a href="/merchant/developers/events">${t("events.link")}</a></p>
${sandboxSection(who, t, m, form, errors)}`,
      },
      status,
    );
  };

  /** A change by an owner or developer (or who `roles` names): the service's refusal as the page shows it; a validation refusal next to its field. */
  const change = (path: string, run: (ctx: RouteContext, who: MerchantSignedIn, t: T) => Promise<void>, roles: readonly MerchantRole[] = ACTING_ROLES): ConsoleRoute =>
    merchantRoute(deps, { method: "POST", path, roles }, async (ctx, who) => {
      const t = textsOf(who);
      try {
        await run(ctx, who, t);
      } catch (err) {
        merchantRefusal(ctx, who, err, { title: t("title"), active: "developers" });
      }
    });

  const depositIdOf = (value: unknown) => (typeof value === "string" && ID_PATTERN.test(value.trim()) ? value.trim() : undefined);

  return [
    merchantRoute(deps, { method: "GET", path: "/merchant/developers" }, async (ctx, who) => show(ctx, who, {})),
    // The primary key's secret (the form before keys had scopes): the service refuses it to a developer, since the primary key can withdraw.
    change(
      "/merchant/developers/rotate-secret",
      async (ctx, who, t) => {
        const grace = graceOf(ctx.state.form?.grace);
        if (grace === undefined) return show(ctx, who, { banner: alert(t("grace.bad")) }, 400);
        const res = await who.client(MerchantService).rotateSecret({ merchantId: who.user.merchantId, gracePeriodSeconds: grace });
        secretPage(ctx, who, t("secret.api"), [[keyTextsOf(who)("keys.key"), res.key?.id ?? ""], [t("secret.api"), res.apiSecret]]);
      },
      KEY_ROLES,
    ),
    change("/merchant/developers/rotate-webhook-secret", async (ctx, who, t) => {
      const grace = graceOf(ctx.state.form?.grace);
      if (grace === undefined) return show(ctx, who, { banner: alert(t("grace.bad")) }, 400);
      const res = await who.client(MerchantService).rotateWebhookSecret({ merchantId: who.user.merchantId, gracePeriodSeconds: grace });
      secretPage(ctx, who, t("secret.webhook"), [[t("secret.webhook"), res.webhookSecret]]);
    }),
    // Any key's secret (the service refuses a developer one of a key that can withdraw); the answer is the key's page.
    change(
      "/merchant/developers/secrets/:secretId/revoke",
      async (ctx, who, t) => {
        const secretId = ctx.params.secretId ?? "";
        if (!ID_PATTERN.test(secretId)) return merchantNotFound(ctx, who, "developers");
        const res = await who.client(MerchantService).revokeSecret({ merchantId: who.user.merchantId, secretId });
        const key = res.key ?? (res.merchant ? await findKey(who, res.merchant.apiKey) : undefined);
        const banner = notice(t("secrets.revoked", { id: secretId }));
        return key ? showKey(ctx, who, key, { banner }) : show(ctx, who, { banner });
      },
      KEY_ROLES,
    ),
    ...keyRoutes(deps, show),
    change("/merchant/developers/allowed-ips", async (ctx, who) => {
      await who.client(MerchantService).setAllowedIps({ merchantId: who.user.merchantId, allowedIps: ipList(String(ctx.state.form?.allowedIps ?? "")) });
      seeOther(ctx, "/merchant/developers?done=saved");
    }),
    change("/merchant/developers/callback-url", async (ctx, who) => {
      await who.client(MerchantService).setCallbackUrl({ merchantId: who.user.merchantId, callbackUrl: String(ctx.state.form?.callbackUrl ?? "").trim() });
      seeOther(ctx, "/merchant/developers?done=saved");
    }),
    change("/merchant/developers/test-event", async (ctx, who, t) => {
      const res = await who.client(CallbackService).sendTestEvent({ merchantId: who.user.merchantId });
      await show(ctx, who, { result: testResult(t, res) });
    }),
    change("/merchant/developers/sandbox/pay", async (ctx, who, t) => {
      const form = ctx.state.form ?? {};
      const depositId = depositIdOf(form.depositId);
      const amountText = String(form.amount ?? "").trim();
      const amount = amountText === "" ? undefined : minorUnits(amountText, who.lang);
      const errors: Record<string, string> = {};
      if (!depositId) errors.payDeposit = t("sandbox.badId");
      if (amountText !== "" && (amount === undefined || amount <= 0n)) errors.amount = t("sandbox.badAmount");
      if (Object.keys(errors).length > 0) return show(ctx, who, { form: { ...form, payDeposit: String(form.depositId ?? "") }, errors }, 400);
      const res = await who.client(DepositService).sandboxPayDeposit({
        merchantId: who.user.merchantId,
        depositId: depositId!,
        ...(amount !== undefined ? { amount } : {}),
        senderName: String(form.senderName ?? "").trim().slice(0, 200),
      });
      await show(ctx, who, { banner: notice(t("sandbox.paid", { id: depositId!, status: res.deposit ? depositStatusName(res.deposit.status) : "" })) });
    }),
    change("/merchant/developers/sandbox/expire", async (ctx, who, t) => {
      const form = ctx.state.form ?? {};
      const depositId = depositIdOf(form.depositId);
      if (!depositId) return show(ctx, who, { form: { expireDeposit: String(form.depositId ?? "") }, errors: { expireDeposit: t("sandbox.badId") } }, 400);
      const res = await who.client(DepositService).sandboxExpireDeposit({ merchantId: who.user.merchantId, depositId });
      await show(ctx, who, { banner: notice(t("sandbox.paid", { id: depositId, status: res.deposit ? depositStatusName(res.deposit.status) : "" })) });
    }),
    merchantRoute(deps, { method: "GET", path: "/merchant/developers/events" }, async (ctx, who) => {
      const t = textsOf(who);
      const status = typeof ctx.query.status === "string" && isDeliveryStatusName(ctx.query.status) ? ctx.query.status : "";
      const cursor = cursorParam(ctx.query.cursor);
      let list: SafeHtml;
      try {
        const res = await who.client(CallbackService).listEvents({
          merchantId: who.user.merchantId,
          ...(status ? { deliveryStatus: deliveryStatusToProto(status) } : {}),
          limit: EVENTS_PAGE,
          cursor,
        });
        const last = (e: CallbackEvent) => {
          const a = e.attempts.at(-1);
          return a ? (a.statusCode ? String(a.statusCode) : (a.error ? attemptErrorText(who.lang, a.error) : a.outcome)) : "—";
        };
        list =
          res.events.length === 0
            ? html`<p>${t("events.empty")}</p>`
            : html`${tableScroll(
                t("events.caption"),
                html`<table><caption>${t("events.caption")}</caption><thead><tr><th scope="col">${t("events.id")}</th><th scope="col">${t("events.type")}</th><th scope="col">${t("events.transaction")}</th><th scope="col">${t("events.status")}</th><th scope="col">${t("events.at")}</th><th scope="col" class="num">${t("events.attempts")}</th><th scope="col">${t("events.last")}</th></tr></thead>
<tbody>${res.events.map((e) => html`<tr><td><code>${e.id}</code></td><td><code>${e.type}</code></td><td>${eventLink(e)}</td><td>${t(`events.${deliveryStatusName(e.deliveryStatus)}`)}</td><td>${timeOf(e.createdAt, who.lang)}</td><td class="num">${e.attempts.length}</td><td>${last(e)}</td></tr>`)}</tbody></table>`,
              )}
<nav aria-label="${t("events.pager")}"><ul>${cursor ? html`<li><a href="${linkTo("/merchant/developers/events", { status })}">${t("events.first")}</a></li>` : null}${res.nextCursor ? html`<li><a href="${linkTo("/merchant/developers/events", { status, cursor: res.nextCursor })}" rel="next">${t("events.next")}</a></li>` : null}</ul></nav>`;
      } catch (err) {
        return merchantRefusal(ctx, who, err, { title: t("events.title"), active: "developers" });
      }
      const option = (value: string, key: Parameters<typeof developerTexts>[1]) => html`<option value="${value}"${value === status ? html` selected` : null}>${t(key)}</option>`;
      merchantPage(ctx, who, {
        title: t("events.title"),
        active: "developers",
        body: html`<form method="get" action="/merchant/developers/events" class="filters"><label for="events-status">${t("events.status")}</label>
<select id="events-status" name="status">${option("", "events.all")}${option("pending", "events.pending")}${option("delivered", "events.delivered")}${option("failed", "events.failed")}</select>
<button type="submit">${t("events.filter")}</button></form>${list}<p><a href="/merchant/developers">${t("secret.back")}</a></p>`,
      });
    }),
  ];
}
