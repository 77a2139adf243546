import type { Knex } from "knex";
import { setPendingTotpSecret, type Session, type SessionStore } from "./sessions.js";
import { recordSignInEvent } from "./sign-in-events.js";
import { newTotpSecret, totpStep, totpUri } from "./totp.js";
import { nowMs, type ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";
import { html, type SafeHtml } from "../shared/html.js";
import type { Language } from "../shared/i18n.js";
import { alert, field, notice } from "../shared/layout.js";
import type { ConsoleRoute, RouteAccess } from "../route.js";
import type { ConsoleContextKoa } from "../state.js";

/** The texts of the enrolment page: each side words them its own way. */
export type TotpPageKey = "totp.title" | "totp.required" | "totp.intro" | "totp.key" | "totp.uri" | "totp.code" | "totp.submit" | "totp.invalid" | "totp.enrolled";

/** The texts of the removal form (only a side that lets its accounts remove TOTP has them). */
export type TotpRemoveKey = "totp.remove.intro" | "totp.remove.code" | "totp.remove.submit" | "totp.removed";

/** What the TOTP pages need of an account, an operator or a merchant user. */
export interface TotpAccount {
  id: string;
  email: string;
  totpSecret: string | null;
  totpLastStep: number | null;
}

/** What was done to an account's TOTP, for a side that audits it: `ok`, or why it was refused. */
export interface TotpChange {
  action: "enrol" | "remove";
  outcome: "ok" | "TOTP_INVALID";
}

/**
 * One side of the TOTP enrolment page (operators at `/totp`, merchant users at `/merchant/totp`):
 * the steps are the same; the path, access, session table, account table, texts, layout and
 * audit come from here, so one side's page never reads or writes the other's accounts.
 */
export interface TotpPagesSide<A extends TotpAccount> {
  path: string;
  access: RouteAccess;
  sessions: SessionStore;
  /** The request's signed-in session and account of this side. */
  signedIn(ctx: ConsoleContextKoa): { session?: Session | undefined; account?: A | undefined };
  text(lang: Language, key: TotpPageKey): string;
  render(ctx: ConsoleContextKoa, page: { title: string; body: SafeHtml }, status: number): void;
  /** Whether the account must have TOTP (the page says so). */
  required(deps: ConsoleContext, account: A): boolean;
  /** The account as stored now (the removal checks the code against the row, not the request's copy). */
  findById(db: Knex, id: string): Promise<A | undefined>;
  setTotp(trx: Knex, id: string, patch: { totpSecret: string | null; totpLastStep: number | null }): Promise<void>;
  /** Where a browser goes after enrolment. */
  afterEnrolment: string;
  eventOwner(account: A): { operatorId: string } | { merchantUserId: string };
  /** Records an enrolment or removal, done or refused (a side's own audit), when it has one. */
  audit?(deps: ConsoleContext, account: A, change: TotpChange): Promise<void>;
  /** The account may remove its own TOTP (with a current code): POST `${path}/remove`. */
  removal?: { text(lang: Language, key: TotpRemoveKey): string; after: string };
}

function signedIn<A extends TotpAccount>(side: TotpPagesSide<A>, ctx: ConsoleContextKoa): { account: A; session: Session } {
  const { account, session } = side.signedIn(ctx);
  if (!account || !session) throw new ConsoleError(500, "INTERNAL_ERROR", `the TOTP page runs behind ${side.access} access`);
  return { account, session };
}

/**
 * GET/POST of one side's TOTP page: enrolment of an authenticator app. The secret shown is kept
 * (sealed with CONSOLE_TOTP_KEY) on the session until a code from it is confirmed, and only then
 * becomes the account's; the confirmed code's step is remembered so it cannot be replayed at the
 * next sign-in. Where the side allows it, an enrolled account removes its TOTP with a current
 * code (a code not used before).
 */
export function totpRoutes<A extends TotpAccount>(deps: ConsoleContext, side: TotpPagesSide<A>): ConsoleRoute[] {
  const audit = async (account: A, change: TotpChange) => {
    if (side.audit) await side.audit(deps, account, change);
  };

  const page = async (ctx: ConsoleContextKoa, error?: string, status = 200) => {
    const { account, session } = signedIn(side, ctx);
    const lang = ctx.state.lang;
    const t = (key: TotpPageKey) => side.text(lang, key);
    const csrf = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
    if (account.totpSecret !== null) {
      const removal = side.removal;
      const r = (key: TotpRemoveKey) => removal!.text(lang, key);
      const body = removal
        ? html`${notice(t("totp.enrolled"))}${alert(error)}
<p>${r("totp.remove.intro")}</p>
<form method="post" action="${`${side.path}/remove`}" class="card" novalidate>
${csrf}
${field({ name: "code", label: r("totp.remove.code"), autocomplete: "one-time-code", inputmode: "numeric", required: true, error })}
<button type="submit">${r("totp.remove.submit")}</button>
</form>`
        : html`${notice(t("totp.enrolled"))}`;
      return side.render(ctx, { title: t("totp.title"), body }, status);
    }
    let secret = session.pendingTotpSecret ? deps.totp.open(session.pendingTotpSecret) : undefined;
    if (!secret) {
      secret = newTotpSecret();
      await setPendingTotpSecret(deps.db, session.idHash, deps.totp.seal(secret), side.sessions);
    }
    // The one message after a redirect (`?done=removed`): a fixed text, never text from the URL.
    const done = side.removal && ctx.query.done === "removed" ? side.removal.text(lang, "totp.removed") : undefined;
    side.render(
      ctx,
      {
        title: t("totp.title"),
        body: html`${notice(done)}${side.required(deps, account) ? notice(t("totp.required")) : null}${alert(error)}
<p>${t("totp.intro")}</p>
<dl class="card">
<dt>${t("totp.key")}</dt><dd><code>${secret.replace(/(.{4})/g, "$1 ").trim()}</code></dd>
<dt>${t("totp.uri")}</dt><dd><code>${totpUri(secret, account.email)}</code></dd>
</dl>
<form method="post" action="${side.path}" class="card" novalidate>
${csrf}
${field({ name: "code", label: t("totp.code"), autocomplete: "one-time-code", inputmode: "numeric", required: true, error })}
<button type="submit">${t("totp.submit")}</button>
</form>`,
      },
      status,
    );
  };

  const routes: ConsoleRoute[] = [
    { method: "GET", path: side.path, access: side.access, handler: (ctx) => page(ctx) },
    {
      method: "POST",
      path: side.path,
      access: side.access,
      handler: async (ctx) => {
        const { account, session } = signedIn(side, ctx);
        if (account.totpSecret !== null || !session.pendingTotpSecret) return page(ctx);
        const secret = deps.totp.open(session.pendingTotpSecret);
        const step = totpStep(secret, ctx.state.form?.code ?? "", deps.clock.now());
        if (step === undefined) {
          await audit(account, { action: "enrol", outcome: "TOTP_INVALID" });
          return page(ctx, side.text(ctx.state.lang, "totp.invalid"), 400);
        }
        const now = nowMs(deps);
        await deps.db.transaction(async (trx) => {
          await side.setTotp(trx, account.id, { totpSecret: deps.totp.seal(secret), totpLastStep: step });
          await setPendingTotpSecret(trx, session.idHash, null, side.sessions);
        });
        await recordSignInEvent(deps.db, { event: "totp_enrolled", channel: "browser", email: account.email, ...side.eventOwner(account), ip: ctx.state.clientIp }, now);
        await audit(account, { action: "enrol", outcome: "ok" });
        ctx.status = 303;
        ctx.redirect(side.afterEnrolment);
      },
    },
  ];
  const removal = side.removal;
  if (removal) {
    routes.push({
      method: "POST",
      path: `${side.path}/remove`,
      access: side.access,
      handler: async (ctx) => {
        const { account: signedInAccount } = signedIn(side, ctx);
        const account = await side.findById(deps.db, signedInAccount.id);
        if (!account || account.totpSecret === null) return page(ctx);
        const step = totpStep(deps.totp.open(account.totpSecret), ctx.state.form?.code ?? "", deps.clock.now());
        if (step === undefined || (account.totpLastStep !== null && step <= account.totpLastStep)) {
          await audit(account, { action: "remove", outcome: "TOTP_INVALID" });
          return page(ctx, side.text(ctx.state.lang, "totp.invalid"), 400);
        }
        const now = nowMs(deps);
        await side.setTotp(deps.db, account.id, { totpSecret: null, totpLastStep: null });
        await recordSignInEvent(deps.db, { event: "totp_removed", channel: "browser", email: account.email, ...side.eventOwner(account), ip: ctx.state.clientIp }, now);
        await audit(account, { action: "remove", outcome: "ok" });
        ctx.status = 303;
        ctx.redirect(removal.after);
      },
    });
  }
  return routes;
}
