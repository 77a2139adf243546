import { API_KEY_SCOPES, type ApiKeyScope, type MerchantRole } from "@payments/access";
import { MerchantService, type ApiKey } from "@payments/contracts/merchant";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { actorText } from "../../shared/service-texts.js";
import { alert, field, notice } from "../../shared/layout.js";
import { seeOther, timeOf } from "../../shared/params.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa, RouteContext } from "../../state.js";
import { merchantCsrfField, merchantNotFound, merchantPage, merchantRefusal, merchantRoute, tableScroll, type MerchantSignedIn } from "../merchant-call.js";
import { keyTexts } from "./key-texts.js";
import { developerTextsOf, graceOf, graceSelect, secretPage } from "./page-parts.js";

/**
 * The Developers page's API keys (issue 32): the list, a new key with the scopes chosen (its
 * secret shown once), and one key's page: its secrets (a new one, revoke one), revoking the key,
 * and the owner's trust for automatic payouts. The merchant service decides who may do what;
 * the page offers only what the user's role may, and refuses a developer's key that can
 * withdraw itself, in the user's language, before asking the service (which refuses it too).
 */

/** Who manages keys: owners and finance users any key, developers the keys that cannot withdraw. */
export const KEY_ROLES = ["owner", "developer", "finance"] as const;
/** Who may hold a key that can withdraw (the merchant service's rule, mirrored to offer no form it would refuse). */
const WITHDRAWAL_KEY_HOLDERS: readonly string[] = ["owner", "finance"];
const LABEL_MAX = 100;

type KT = (key: Parameters<typeof keyTexts>[1], params?: Record<string, string | number>) => string;
export const keyTextsOf =
  (who: MerchantSignedIn): KT =>
  (key, params) =>
    keyTexts(who.lang, key, params);

const canWithdraw = (scopes: readonly string[]) => scopes.includes("withdrawals");
const managesKeys = (who: MerchantSignedIn) => (KEY_ROLES as readonly string[]).includes(who.user.role);
/** Whether the user may be shown a secret of, or manage, a key with these scopes. */
export const mayHold = (who: MerchantSignedIn, scopes: readonly string[]) => managesKeys(who) && (!canWithdraw(scopes) || WITHDRAWAL_KEY_HOLDERS.includes(who.user.role));

const keyName = (t: KT, key: ApiKey) => (key.primary || key.label === "" ? t("keys.primary") : key.label);
const scopeNames = (t: KT, scopes: readonly string[]) => scopes.map((s) => ((API_KEY_SCOPES as readonly string[]).includes(s) ? t(`scope.${s as ApiKeyScope}`) : s)).join(", ");
const keyPath = (key: string) => `/merchant/developers/keys/${encodeURIComponent(key)}`;
/** Key ids as the merchant service makes them (`pk_` + base64url); anything else names no key. */
const KEY_PATTERN = /^pk_[A-Za-z0-9_-]{1,60}$/;

function keyStatus(who: MerchantSignedIn, t: KT, key: ApiKey): SafeHtml | string {
  return key.revokedAt ? html`${t("keys.revokedAt")} ${timeOf(key.revokedAt, who.lang)}` : t("keys.active");
}

function keyRow(who: MerchantSignedIn, t: KT, key: ApiKey): SafeHtml {
  const name = keyName(t, key);
  return html`<tr><th scope="row">${name}</th><td><code>${key.id}</code></td><td>${scopeNames(t, key.scopes)}</td><td>${key.trusted ? t("keys.yesTrusted") : t("keys.notTrusted")}</td>
<td>${timeOf(key.createdAt, who.lang)}${key.createdBy ? html`<br><span class="hint">${t("keys.by", { who: actorText(who.lang, key.createdBy) })}</span>` : null}</td><td>${keyStatus(who, t, key)}</td>
<td><a href="${keyPath(key.id)}" aria-label="${t("keys.manageLabel", { name })}">${t("keys.manage")}</a></td></tr>`;
}

/** The create form: a name and the scopes, withdrawals offered only to who may hold such a key. */
function createForm(who: MerchantSignedIn, t: KT, form: Record<string, string>, errors: Record<string, string>): SafeHtml {
  const offered = API_KEY_SCOPES.filter((s) => mayHold(who, [s]));
  const checked = (s: ApiKeyScope) => (Object.keys(form).length === 0 ? s === "read" : form[`scope_${s}`] === "1");
  const scopesError = errors.scopes;
  return html`<form method="post" action="/merchant/developers/keys" class="card" aria-labelledby="h-create-key"><h3 id="h-create-key">${t("create.title")}</h3>${merchantCsrfField(who)}
${field({ id: "key-label", name: "label", label: t("create.label"), required: true, value: form.label ?? "", hint: t("create.labelHint"), error: errors.label })}
<fieldset${scopesError ? html` aria-describedby="key-scopes-error"` : null}><legend>${t("create.scopes")}</legend>
${offered.map((s) => html`<p><input type="checkbox" id="${`key-scope-${s}`}" name="${`scope_${s}`}" value="1"${checked(s) ? html` checked` : null}> <label for="${`key-scope-${s}`}" class="inline-label">${t(`scope.${s}`)}</label> <span class="hint">${t(`scope.${s}Hint`)}</span></p>`)}
${scopesError ? html`<p class="error" id="key-scopes-error">${scopesError}</p>` : null}</fieldset>
${offered.includes("withdrawals") ? null : html`<p class="hint">${t("create.noWithdrawals")}</p>`}
<button type="submit">${t("create.submit")}</button></form>`;
}

/** The keys section of the Developers page: every key, and the create form for who manages keys. */
export function keysSection(who: MerchantSignedIn, keys: readonly ApiKey[], kind: SafeHtml, state: { form?: Record<string, string>; errors?: Record<string, string> }): SafeHtml {
  const t = keyTextsOf(who);
  const table = html`<table><caption>${t("keys.caption")}</caption><thead><tr><th scope="col">${t("keys.name")}</th><th scope="col">${t("keys.key")}</th><th scope="col">${t("keys.scopes")}</th><th scope="col">${t("keys.trusted")}</th><th scope="col">${t("keys.created")}</th><th scope="col">${t("keys.status")}</th><th scope="col"><span class="skip">${t("keys.manage")}</span></th></tr></thead>
<tbody>${keys.map((k) => keyRow(who, t, k))}</tbody></table>`;
  return html`<section aria-labelledby="h-keys"><h2 id="h-keys">${t("keys.title")}</h2><p class="hint">${t("keys.intro")}</p>${kind}
${tableScroll(t("keys.caption"), table)}
${managesKeys(who) ? createForm(who, t, state.form ?? {}, state.errors ?? {}) : null}</section>`;
}

function secretsTable(who: MerchantSignedIn, key: ApiKey, manage: boolean): SafeHtml {
  const d = developerTextsOf(who);
  return tableScroll(
    d("secrets.caption"),
    html`<table><caption>${d("secrets.caption")}</caption><thead><tr><th scope="col">${d("secrets.id")}</th><th scope="col">${d("secrets.created")}</th><th scope="col">${d("secrets.expires")}</th><th scope="col">${d("secrets.valid")}</th>${manage ? html`<th scope="col"><span class="skip">${d("secrets.revoke")}</span></th>` : null}</tr></thead>
<tbody>${key.secrets.map(
      (s) => html`<tr><td><code>${s.id}</code></td><td>${timeOf(s.createdAt, who.lang)}</td><td>${timeOf(s.expiresAt, who.lang) ?? "—"}</td><td>${s.valid ? d("secrets.yes") : d("secrets.no")}</td>${
        manage
          ? html`<td>${s.valid ? html`<form method="post" action="${`/merchant/developers/secrets/${s.id}/revoke`}" class="inline">${merchantCsrfField(who)}<button type="submit" aria-label="${`${d("secrets.revoke")} ${s.id}`}">${d("secrets.revoke")}</button></form>` : null}</td>`
          : null
      }</tr>`,
    )}</tbody></table>`,
  );
}

/** The owner's mark for automatic payouts, with what it means before it is set. */
function trustSection(who: MerchantSignedIn, t: KT, key: ApiKey, error: string | undefined): SafeHtml | null {
  if (!canWithdraw(key.scopes) || key.revokedAt) return null;
  const state = html`<p>${key.trusted ? t("trust.on") : t("trust.off")}</p>`;
  if (who.user.role !== "owner") return html`<section aria-labelledby="h-trust"><h3 id="h-trust">${t("trust.title")}</h3>${state}<p class="hint">${t("trust.ownerOnly")}</p></section>`;
  const action = `${keyPath(key.id)}/trust`;
  const form = key.trusted
    ? html`<form method="post" action="${action}">${merchantCsrfField(who)}<input type="hidden" name="trusted" value="0"><button type="submit">${t("trust.remove")}</button></form>`
    : html`<form method="post" action="${action}">${merchantCsrfField(who)}<input type="hidden" name="trusted" value="1">
<p><input type="checkbox" id="trust-confirm" name="confirm" value="1" required${error ? html` aria-invalid="true" aria-describedby="trust-confirm-error"` : null}> <label for="trust-confirm" class="inline-label">${t("trust.confirm")}</label></p>
${error ? html`<p class="error" id="trust-confirm-error">${error}</p>` : null}<button type="submit">${t("trust.submit")}</button></form>`;
  return html`<section aria-labelledby="h-trust" class="card"><h3 id="h-trust">${t("trust.title")}</h3>${state}<div class="alert" role="note">${t("trust.warning")}</div>${form}</section>`;
}

/** One key's page. */
export function showKey(ctx: ConsoleContextKoa, who: MerchantSignedIn, key: ApiKey, state: { banner?: SafeHtml | null; trustError?: string } = {}, status = 200): void {
  const t = keyTextsOf(who);
  const d = developerTextsOf(who);
  const manage = mayHold(who, key.scopes) && !key.revokedAt;
  const name = keyName(t, key);
  const facts = html`<dl class="facts card"><dt>${t("keys.key")}</dt><dd><code>${key.id}</code></dd><dt>${t("keys.scopes")}</dt><dd>${scopeNames(t, key.scopes)}</dd>
<dt>${t("keys.trusted")}</dt><dd>${key.trusted ? t("keys.yesTrusted") : t("keys.notTrusted")}</dd><dt>${t("keys.created")}</dt><dd>${timeOf(key.createdAt, who.lang)}${key.createdBy ? ` · ${t("keys.by", { who: actorText(who.lang, key.createdBy) })}` : ""}</dd>
<dt>${t("keys.status")}</dt><dd>${keyStatus(who, t, key)}</dd></dl>`;
  const notes = html`${key.primary ? html`<p class="hint">${t("keys.primaryHint")}</p>` : null}${key.revokedAt ? html`<p class="notice">${t("key.revoked")}</p>` : null}${
    !key.revokedAt && managesKeys(who) && !manage ? html`<p class="notice">${t("key.holdersOnly")}</p>` : null
  }`;
  const rotate = manage
    ? html`<form method="post" action="${`${keyPath(key.id)}/rotate-secret`}" class="card"><h3>${d("secrets.new")}</h3>${merchantCsrfField(who)}<p class="hint">${d("secrets.newHint")}</p>${graceSelect(d, "grace-secret")}<button type="submit">${d("secrets.new")}</button></form>`
    : null;
  const revoke =
    manage && !key.primary
      ? html`<form method="post" action="${`${keyPath(key.id)}/revoke`}" class="card"><h3>${t("key.revokeTitle")}</h3>${merchantCsrfField(who)}<p class="hint">${t("key.revokeHint")}</p><button type="submit">${t("key.revokeSubmit")}</button></form>`
      : null;
  merchantPage(
    ctx,
    who,
    {
      title: t("key.title", { name }),
      active: "developers",
      body: html`${state.banner ?? null}${facts}${notes}${secretsTable(who, key, manage)}<div class="actions">${rotate}${revoke}</div>${trustSection(who, t, key, state.trustError)}<p><a href="/merchant/developers">${t("key.back")}</a></p>`,
    },
    status,
  );
}

/** The merchant's key named `apiKey`, or undefined (another merchant's key is not in the user's list). */
export async function findKey(who: MerchantSignedIn, apiKey: string): Promise<ApiKey | undefined> {
  if (!KEY_PATTERN.test(apiKey)) return undefined;
  return (await who.client(MerchantService).listApiKeys({ merchantId: who.user.merchantId })).keys.find((k) => k.id === apiKey);
}

/** A new key's form read: the name and the scopes ticked, or what is wrong with them. */
function readCreateForm(t: KT, form: Record<string, string>): { label: string; scopes: ApiKeyScope[]; errors: Record<string, string> } {
  const label = String(form.label ?? "").trim();
  const scopes = API_KEY_SCOPES.filter((s) => form[`scope_${s}`] === "1");
  const errors: Record<string, string> = {};
  if (label.length < 1 || label.length > LABEL_MAX) errors.label = t("create.badLabel");
  if (scopes.length === 0) errors.scopes = t("create.badScopes");
  return { label, scopes, errors };
}

/** The key routes; `showDevelopers` renders the Developers page (with a create form's errors). */
export function keyRoutes(
  deps: ConsoleContext,
  showDevelopers: (ctx: ConsoleContextKoa, who: MerchantSignedIn, state: { keyForm?: Record<string, string>; keyErrors?: Record<string, string>; banner?: SafeHtml | null }, status?: number) => Promise<void>,
): ConsoleRoute[] {
  /** A key action: the key found (404 otherwise), the service's refusal as the page shows it. */
  const onKey = (
    method: "GET" | "POST",
    path: string,
    roles: readonly MerchantRole[] | undefined,
    run: (ctx: RouteContext, who: MerchantSignedIn, key: ApiKey) => Promise<void>,
  ): ConsoleRoute =>
    merchantRoute(deps, { method, path, ...(roles ? { roles } : {}) }, async (ctx, who) => {
      try {
        const key = await findKey(who, ctx.params.apiKey ?? "");
        if (!key) return merchantNotFound(ctx, who, "developers");
        await run(ctx, who, key);
      } catch (err) {
        merchantRefusal(ctx, who, err, { title: developerTextsOf(who)("title"), active: "developers" });
      }
    });

  return [
    merchantRoute(deps, { method: "POST", path: "/merchant/developers/keys", roles: KEY_ROLES }, async (ctx, who) => {
      const t = keyTextsOf(who);
      const form = ctx.state.form ?? {};
      const { label, scopes, errors } = readCreateForm(t, form);
      if (Object.keys(errors).length > 0) return showDevelopers(ctx, who, { keyForm: form, keyErrors: errors }, 400);
      // Not offered to a developer, so only a crafted form asks: refused here in their language (the service refuses it too).
      if (!mayHold(who, scopes)) return merchantPage(ctx, who, { title: t("create.title"), active: "developers", body: alert(t("create.refused")) ?? html`` }, 403);
      try {
        const res = await who.client(MerchantService).createApiKey({ merchantId: who.user.merchantId, label, scopes });
        secretPage(ctx, who, t("created.title"), [[t("created.key"), res.key!.id], [t("created.secret"), res.apiSecret]], keyPath(res.key!.id));
      } catch (err) {
        merchantRefusal(ctx, who, err, { title: t("create.title"), active: "developers" });
      }
    }),
    onKey("GET", "/merchant/developers/keys/:apiKey", undefined, async (ctx, who, key) => {
      const t = keyTextsOf(who);
      const done = ctx.query.done === "trusted" ? t("trust.done") : ctx.query.done === "untrusted" ? t("trust.removed") : undefined;
      showKey(ctx, who, key, { banner: done ? notice(done) : null });
    }),
    onKey("POST", "/merchant/developers/keys/:apiKey/rotate-secret", KEY_ROLES, async (ctx, who, key) => {
      const d = developerTextsOf(who);
      const grace = graceOf(ctx.state.form?.grace);
      if (grace === undefined) return showKey(ctx, who, key, { banner: alert(d("grace.bad")) }, 400);
      const res = await who.client(MerchantService).rotateSecret({ merchantId: who.user.merchantId, apiKey: key.id, gracePeriodSeconds: grace });
      secretPage(ctx, who, d("secret.api"), [[keyTextsOf(who)("keys.key"), key.id], [d("secret.api"), res.apiSecret]], keyPath(key.id));
    }),
    onKey("POST", "/merchant/developers/keys/:apiKey/revoke", KEY_ROLES, async (ctx, who, key) => {
      const res = await who.client(MerchantService).revokeApiKey({ merchantId: who.user.merchantId, apiKey: key.id });
      showKey(ctx, who, res.key ?? key, { banner: notice(keyTextsOf(who)("key.revokedDone", { key: key.id })) });
    }),
    onKey("POST", "/merchant/developers/keys/:apiKey/trust", ["owner"], async (ctx, who, key) => {
      const trusted = ctx.state.form?.trusted === "1";
      if (trusted && ctx.state.form?.confirm !== "1") return showKey(ctx, who, key, { trustError: keyTextsOf(who)("trust.confirmMissing") }, 400);
      await who.client(MerchantService).setApiKeyTrusted({ merchantId: who.user.merchantId, apiKey: key.id, trusted });
      seeOther(ctx, `${keyPath(key.id)}?done=${trusted ? "trusted" : "untrusted"}`);
    }),
  ];
}
