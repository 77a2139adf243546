import { html, type SafeHtml } from "../../shared/html.js";
import type { ConsoleContextKoa } from "../../state.js";
import { merchantPage, type MerchantSignedIn } from "../merchant-call.js";
import { developerTexts } from "./texts.js";

/** What the Developers page's parts share: the grace periods of a rotation, and a secret's one showing. */

/** The grace periods offered when a secret is rotated, in seconds. */
export const GRACE_PERIODS = ["0", "3600", "86400", "604800"] as const;

export type DeveloperT = (key: Parameters<typeof developerTexts>[1], params?: Record<string, string | number>) => string;

export const developerTextsOf =
  (who: MerchantSignedIn): DeveloperT =>
  (key, params) =>
    developerTexts(who.lang, key, params);

export function graceSelect(t: DeveloperT, id: string): SafeHtml {
  return html`<label for="${id}">${t("grace.label")}</label><select id="${id}" name="grace">${GRACE_PERIODS.map((g) => html`<option value="${g}"${g === "86400" ? html` selected` : null}>${t(`grace.${g}`)}</option>`)}</select>`;
}

export function graceOf(value: unknown): number | undefined {
  return typeof value === "string" && (GRACE_PERIODS as readonly string[]).includes(value) ? Number(value) : undefined;
}

/** Secrets on their only showing (a new key's id beside its secret): never stored by a cache, never shown again. */
export function secretPage(ctx: ConsoleContextKoa, who: MerchantSignedIn, title: string, facts: ReadonlyArray<[string, string]>, back = "/merchant/developers"): void {
  const t = developerTextsOf(who);
  ctx.set("Cache-Control", "no-store");
  merchantPage(ctx, who, {
    title,
    active: "developers",
    body: html`<div class="notice" role="status">${t("secret.once")}</div><dl class="facts card">${facts.map(([label, value]) => html`<dt>${label}</dt><dd><code>${value}</code></dd>`)}</dl><p><a href="${back}">${t("secret.back")}</a></p>`,
  });
}
