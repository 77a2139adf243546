import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ApprovalService, ApprovalStatus, type Approval } from "@payments/contracts/operator";
import { samePerson } from "../../identity/approvals.js";
import { html, type SafeHtml } from "../../shared/html.js";
import type { ServiceName } from "../../service-clients.js";
import { approvalText } from "../../shared/approval-texts.js";
import { formatTime, type SignedIn } from "../operator-call.js";
import { inboxTexts } from "./inbox-texts.js";

/**
 * The approvals that wait for `targetId` in `services` (ListApprovals by target). A service that
 * does not answer adds none: the forms stay, and the service still decides what needs approval.
 */
export async function waitingFor(who: SignedIn, services: readonly ServiceName[], targetId: string): Promise<Approval[]> {
  const answers = await Promise.all(
    services.map(async (service) => {
      try {
        return (await who.client(ApprovalService, service).listApprovals({ status: ApprovalStatus.PENDING, targetId, limit: 10 })).approvals;
      } catch {
        return [];
      }
    }),
  );
  return answers.flat();
}

/** What stands where the decision forms would: each approval that waits, who asked and when, with its link. */
export function waitingNotice(who: SignedIn, approvals: readonly Approval[]): SafeHtml {
  const t = (key: "waitingForms" | "waitingOwn", params: Record<string, string>) => inboxTexts(who.lang, key, params);
  return html`${approvals.map((a) => {
    const time = a.createdAt ? formatTime(timestampDate(a.createdAt), who.lang) : "";
    const what = approvalText(who.lang, a);
    const line = samePerson(a.maker, who.operator.email) ? t("waitingOwn", { what, time }) : t("waitingForms", { what, maker: a.maker, time });
    return html`<div class="notice waiting-approval" role="status">${line} <a href="${`/approvals/${a.service}/${a.id}`}">${who.t("call.approvalLink", { id: a.id })}</a></div>`;
  })}`;
}

/**
 * The decision forms of a page (a transfer's, a deposit's, a withdrawal's), or, while an approval
 * waits for that thing, the waiting approvals instead: nobody decides it again under a request
 * that a second person is about to approve.
 */
export async function formsUnlessWaiting(who: SignedIn, services: readonly ServiceName[], targetId: string, forms: SafeHtml | null): Promise<SafeHtml | null> {
  const waiting = await waitingFor(who, services, targetId);
  return waiting.length > 0 ? waitingNotice(who, waiting) : forms;
}
