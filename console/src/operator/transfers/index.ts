import { DepositService, TransferStatus, type IncomingTransfer } from "@payments/contracts/deposit";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ResolveTransferRequestSchema } from "@payments/contracts/deposit";
import { transferStatusFromProto } from "@payments/contracts/statuses";
import { roleAtLeast } from "@payments/access";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { TextKey } from "../texts/index.js";
import { alert, field, notice } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import { actionReasonText, matchByText, matchReasonText, scoreText, waitingReasonText } from "../../shared/match-reasons.js";
import { statusText as serviceStatusText } from "../../shared/service-texts.js";
import type { ConsoleContextKoa } from "../../state.js";
import { waitingFor, waitingNotice } from "../approvals/waiting.js";
import { csrfField, cursorParam, isOneOf, money, notFoundPage, operatorRoute, type Refusal, readOne, refusalOf, type SignedIn, timeOf, waitingForApproval, workPage } from "../operator-call.js";
import { accountNamed, actorNamed, merchantNamed, Names, transferSandbox } from "../directory.js";
import { depositOf, merchantsOfDeposits, transferQueue } from "./queue.js";

const TRANSFER_ID = /^[A-Za-z0-9_-]{1,80}$/;
const DECISIONS = ["match", "complete", "refuse", "return"] as const;
type Decision = (typeof DECISIONS)[number];

/** Outcomes a redirect after a decision names (fixed keys, never text from the request). */
const DONE_KEYS: Record<Decision, TextKey> = {
  match: "transfer.done.match",
  complete: "transfer.done.complete",
  refuse: "transfer.done.refuse",
  return: "transfer.done.return",
};

function isDecision(value: unknown): value is Decision {
  return isOneOf(DECISIONS, value);
}

export function statusText(who: SignedIn, status: TransferStatus): string {
  return who.t(`transfer.status.${transferStatusFromProto(status) ?? "unknown"}`);
}

interface DetailState {
  refusal?: Refusal | undefined;
  decision?: Decision | undefined;
  form?: Record<string, string> | undefined;
  /** Names of the transfer's merchant, account and the people who acted; the merchant of each deposit it names. */
  names?: Names | undefined;
  merchants?: Map<string, string> | undefined;
  /** The approvals that wait for this transfer: they stand where the decision forms would. */
  waiting?: SafeHtml | undefined;
}

function reasonField(who: SignedIn, decision: Decision, state: DetailState): SafeHtml {
  const mine = state.decision === decision;
  const error = mine && state.refusal?.field === "reason" ? state.refusal.message : undefined;
  return field({ id: `${decision}-reason`, name: "reason", label: who.t("transfer.decisionReason"), required: true, value: mine ? (state.form?.reason ?? "") : "", error });
}

function actionForm(who: SignedIn, transfer: IncomingTransfer, decision: Decision, title: string, inner: SafeHtml | null, state: DetailState): SafeHtml {
  return html`<form method="post" action="${`/transfers/${transfer.id}/resolve`}" class="card" aria-labelledby="${`h-${decision}`}">
<h3 id="${`h-${decision}`}">${title}</h3>
${csrfField(who)}<input type="hidden" name="decision" value="${decision}">
${inner}
${reasonField(who, decision, state)}
<button type="submit">${title}</button>
</form>`;
}

/** The transfer's merchant (its deposit's), receiving account and bank by name, and its mode. */
function factsByName(who: SignedIn, transfer: IncomingTransfer, state: DetailState): SafeHtml {
  const names = state.names;
  const merchantId = state.merchants?.get(depositOf(transfer));
  if (!names) return html`<dt>${who.t("transfer.receivingIban")}</dt><dd><code>${transfer.iban}</code></dd>`;
  const sandbox = transferSandbox(names, transfer);
  return html`<dt>${who.t("list.merchant")}</dt><dd>${merchantId ? merchantNamed(names, merchantId) : "—"}</dd>
<dt>${who.t("transfer.receivingIban")}</dt><dd>${accountNamed(names, transfer.iban)}</dd>
<dt>${who.t("deposit.kind")}</dt><dd>${sandbox === undefined ? "—" : who.t(sandbox ? "kind.sandbox" : "kind.live")}</dd>`;
}

function detail(who: SignedIn, transfer: IncomingTransfer, state: DetailState, banner: SafeHtml | null): SafeHtml {
  const open = transfer.status === TransferStatus.UNMATCHED || transfer.status === TransferStatus.REVIEW;
  const mine = (d: Decision) => state.decision === d;
  const fieldError = (d: Decision, name: string) => (mine(d) && state.refusal?.field === name ? state.refusal.message : undefined);
  const suggested = transfer.reviewDepositId || transfer.candidates[0]?.depositId || "";
  const forms: SafeHtml[] = [];
  // Buttons are offered by role only as a convenience: the deposit service decides (and refuses).
  if (open && roleAtLeast(who.operator.role, "operator")) {
    forms.push(
      actionForm(
        who,
        transfer,
        "match",
        who.t("transfer.action.match"),
        field({ id: "match-deposit", name: "depositId", label: who.t("transfer.depositId"), required: true, value: mine("match") ? (state.form?.depositId ?? "") : suggested, hint: who.t("transfer.depositIdHint"), error: fieldError("match", "match_deposit_id") }),
        state,
      ),
    );
    if (transfer.status === TransferStatus.REVIEW && transfer.reviewDepositId) {
      forms.push(actionForm(who, transfer, "complete", who.t("transfer.action.complete"), html`<p class="hint">${who.t("transfer.completeHint", { id: transfer.reviewDepositId })}</p>`, state));
      forms.push(actionForm(who, transfer, "refuse", who.t("transfer.action.refuse"), html`<p class="hint">${who.t("transfer.refuseHint")}</p>`, state));
    }
  }
  if (open && roleAtLeast(who.operator.role, "finance")) {
    const nameRequired = transfer.senderName.trim() === "";
    forms.push(
      actionForm(
        who,
        transfer,
        "return",
        who.t("transfer.action.return"),
        html`${field({ id: "return-iban", name: "iban", label: who.t("transfer.returnIban"), value: mine("return") ? (state.form?.iban ?? "") : transfer.senderIban, hint: who.t("transfer.returnIbanHint"), error: fieldError("return", "iban") })}
${field({ id: "return-name", name: "recipientName", label: who.t("transfer.recipientName"), required: nameRequired, value: mine("return") ? (state.form?.recipientName ?? "") : "", hint: nameRequired ? who.t("transfer.recipientNameRequired") : who.t("transfer.recipientNameHint", { name: transfer.senderName }), error: fieldError("return", "recipient_name") ?? fieldError("return", "return.recipient_name") })}`,
        state,
      ),
    );
  }
  const candidates =
    transfer.candidates.length > 0
      ? html`<table><caption>${who.t("transfer.candidates")}</caption><thead><tr><th scope="col">${who.t("transfer.depositId")}</th><th scope="col" class="num">${who.t("transfer.score")}</th><th scope="col">${who.t("transfer.matchReasons")}</th></tr></thead>
<tbody>${transfer.candidates.map((c) => html`<tr><td><code>${c.depositId}</code></td><td class="num">${scoreText(who.lang, c.score)}</td><td>${c.reasons.map((r) => matchReasonText(who.lang, r)).join(", ")}</td></tr>`)}</tbody></table>`
      : null;
  const actions =
    transfer.actions.length > 0
      ? html`<table><caption>${who.t("transfer.history")}</caption><thead><tr><th scope="col">${who.t("transfer.when")}</th><th scope="col">${who.t("transfer.action")}</th><th scope="col">${who.t("transfer.actor")}</th><th scope="col">${who.t("transfer.decisionReason")}</th><th scope="col">${who.t("transfer.depositId")}</th></tr></thead>
<tbody>${transfer.actions.map((a) => html`<tr><td>${timeOf(a.at, who.lang)}</td><td>${serviceStatusText(who.lang, "transferAction", a.action)}</td><td>${state.names ? actorNamed(state.names, a.actor) : a.actor}</td><td>${actionReasonText(who.lang, a.reason)}</td><td>${a.depositId || "—"}</td></tr>`)}</tbody></table>`
      : null;
  const generalError = state.refusal && !state.refusal.approvalId ? alert(state.refusal.message) : null;
  return html`${banner}${generalError}
<p><a href="/transfers">${who.t("transfers.back")}</a></p>
<dl class="facts card">
<dt>${who.t("transfer.status")}</dt><dd>${statusText(who, transfer.status)}${transfer.late ? html` (${who.t("transfer.late")})` : null}</dd>
<dt>${who.t("transfer.amount")}</dt><dd>${money(transfer.amount, transfer.currency, who.lang)}</dd>
${factsByName(who, transfer, state)}
<dt>${who.t("transfer.sender")}</dt><dd>${transfer.senderName || who.t("transfer.noSender")}</dd>
<dt>${who.t("transfer.senderIban")}</dt><dd>${transfer.senderIban ? html`<code>${transfer.senderIban}</code>` : "—"}</dd>
<dt>${who.t("transfer.reference")}</dt><dd>${transfer.reference || "—"}</dd>
<dt>${who.t("transfer.bankTransactionId")}</dt><dd><code>${transfer.bankTransactionId}</code></dd>
<dt>${who.t("transfer.reportedAt")}</dt><dd>${timeOf(transfer.reportedAt, who.lang)}</dd>
<dt>${who.t("transfer.valueDate")}</dt><dd>${transfer.valueDate || "—"}</dd>
<dt>${who.t("transfer.source")}</dt><dd>${transfer.source || "—"}</dd>
<dt>${who.t("transfer.reason")}</dt><dd>${waitingReasonText(who.lang, transfer.unmatchedReason) || "—"}</dd>
<dt>${who.t("transfer.score")}</dt><dd>${transfer.matchBy ? html`${matchByText(who.lang, transfer.matchBy)} ${scoreText(who.lang, transfer.matchScore)}` : "—"}</dd>
<dt>${who.t("transfer.matchReasons")}</dt><dd>${transfer.matchReasons.map((r) => matchReasonText(who.lang, r)).join(", ") || "—"}</dd>
<dt>${who.t("transfer.reviewDeposit")}</dt><dd>${transfer.reviewDepositId || "—"}</dd>
<dt>${who.t("transfer.deposit")}</dt><dd>${transfer.depositId || "—"}</dd>
<dt>${who.t("transfer.resolution")}</dt><dd>${transfer.resolution ? html`${transfer.resolution} · ${state.names ? actorNamed(state.names, transfer.resolvedBy) : transfer.resolvedBy} · ${timeOf(transfer.resolvedAt, who.lang)}` : "—"}</dd>
</dl>
${candidates}
${actions}
${
  state.waiting
    ? html`<h2>${who.t("transfer.decide")}</h2>${state.waiting}`
    : forms.length > 0
    ? html`<h2>${who.t("transfer.decide")}</h2><div class="actions">${forms}</div>`
    : open
      ? html`<p>${who.t("transfer.noActions")}</p>`
      : null
}`;
}

/** The request a decision form asks for; the service validates what is in it. */
function resolveRequest(who: SignedIn, transferId: string, decision: Decision, form: Record<string, string>): MessageInitShape<typeof ResolveTransferRequestSchema> {
  const base = { transferId, actor: who.operator.email, reason: (form.reason ?? "").trim() };
  switch (decision) {
    case "match":
      return { ...base, decision: { case: "matchDepositId", value: (form.depositId ?? "").trim() } };
    case "complete":
      return { ...base, decision: { case: "complete", value: true } };
    case "refuse":
      return { ...base, decision: { case: "refuse", value: true } };
    case "return":
      return { ...base, decision: { case: "return", value: { iban: (form.iban ?? "").replace(/\s+/g, "").toUpperCase(), recipientName: (form.recipientName ?? "").trim() } } };
  }
}

/**
 * The transfers queue: open incoming transfers (unmatched, and in review), oldest first, paged
 * by the deposit service's cursor; one transfer with its match explanation, candidates and
 * history; and the operator's decision on it through ResolveTransfer.
 */
export function transferPages(deps: ConsoleContext): ConsoleRoute[] {
  const showDetail = async (ctx: ConsoleContextKoa, who: SignedIn, id: string, state: DetailState, banner: SafeHtml | null, status = 200) => {
    const back = html`<p><a href="/transfers">${who.t("transfers.back")}</a></p>`;
    const transfer = await readOne(ctx, who, { title: who.t("transfer.title", { id }), back, id }, async () => (await who.client(DepositService).getTransfer({ transferId: id })).transfer);
    if (!transfer) return;
    const about = transfer;
    const [merchants, names] = await Promise.all([merchantsOfDeposits(deps, who, [depositOf(about)]), Names.of(deps, who)]);
    state = { ...state, merchants, names: await names.ensure({ merchants: merchants.values(), ibans: [about.iban], actors: [about.resolvedBy, ...about.actions.map((a) => a.actor)] }) };
    // A match, return or completion that waits for a second person (the deposit service's approval, or the payout service's return): no second decision meanwhile.
    const waiting = await waitingFor(who, ["deposit", "payout"], id);
    workPage(ctx, who, { title: who.t("transfer.title", { id }), body: detail(who, transfer, { ...state, ...(waiting.length > 0 ? { waiting: waitingNotice(who, waiting) } : {}) }, banner) }, status);
  };

  return [
    {
      method: "GET",
      path: "/transfers",
      access: "operator",
      handler: (ctx) => transferQueue(deps, ctx),
    },
    operatorRoute(deps, { method: "GET", path: "/transfers/:id" }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      if (!TRANSFER_ID.test(id)) return notFoundPage(ctx, who);
      const done = ctx.query.done;
      const approval = cursorParam(ctx.query.approval);
      const banner = approval ? waitingForApproval(who, "deposit", approval) : isDecision(done) ? notice(who.t(DONE_KEYS[done])) : null;
      await showDetail(ctx, who, id, {}, banner);
    }),
    operatorRoute(deps, { method: "POST", path: "/transfers/:id/resolve" }, async (ctx, who) => {
      const id = ctx.params.id ?? "";
      const form = ctx.state.form ?? {};
      const decision = form.decision;
      if (!TRANSFER_ID.test(id) || !isDecision(decision)) return workPage(ctx, who, { title: who.t("error.title"), body: alert(who.t("transfer.badDecision")) ?? html`` }, 400);
      // A decision without its reason is sent back at once: the service would otherwise store an
      // approval (four-eyes is asked before the request is validated) that a second operator must refuse.
      if (!(form.reason ?? "").trim()) {
        const refusal: Refusal = { status: 400, message: who.t("transfer.reasonRequired"), reason: "VALIDATION_ERROR", field: "reason", approvalId: undefined };
        return showDetail(ctx, who, id, { refusal, decision, form }, null, 400);
      }
      try {
        await who.client(DepositService).resolveTransfer(resolveRequest(who, id, decision, form));
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        if (refusal.approvalId) {
          ctx.status = 303;
          ctx.redirect(`/transfers/${id}?approval=${encodeURIComponent(refusal.approvalId)}`);
          return;
        }
        return showDetail(ctx, who, id, { refusal, decision, form }, null, refusal.status);
      }
      ctx.status = 303;
      ctx.redirect(`/transfers/${id}?done=${decision}`);
    }),
  ];
}
