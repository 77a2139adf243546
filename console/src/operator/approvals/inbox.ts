import { timestampDate, timestampFromMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ApprovalService, ApprovalStatus, type Approval } from "@payments/contracts/operator";
import { approvalStatusFromProto, approvalStatusToProto } from "@payments/contracts/statuses";
import { roleAtLeast } from "@payments/access";
import { listApprovals, samePerson, type ApprovalStatus as AccountStatus } from "../../identity/approvals.js";
import { nowMs, type ConsoleContext } from "../../context.js";
import type { ServiceName } from "../../service-clients.js";
import { refusalOf, SERVICES, type Refusal, type SignedIn } from "../operator-call.js";
import { approvalText } from "../../shared/approval-texts.js";
import { accountInboxItems } from "./console-approvals.js";

const PAGE_SIZE = 50;
/** How many of the console's own account changes the inbox reads at once (they are few). */
const ACCOUNT_READ = 100;

/** One thing that waits (or waited) for a second person, wherever it is kept: a service's approval or the console's own account change. */
export interface InboxItem {
  id: string;
  /** The service that keeps it, or the console (account changes). */
  where: ServiceName | "console";
  href: string;
  /** What it does, in words. */
  what: string;
  maker: string;
  /** The signed-in operator asked for it. */
  own: boolean;
  createdAt: Date;
  expiresAt: Date;
  status: AccountStatus | "unknown";
}

export type StatusFilter = AccountStatus | "all";

export interface Inbox {
  items: InboxItem[];
  /** A service with more than one page: its next page's link. */
  more: Array<{ service: ServiceName; cursor: string }>;
  failures: Array<{ service: ServiceName; refusal: Refusal }>;
  /** Every service refused (or none answered): the page's status. */
  worst: number;
}

function serviceItem(who: SignedIn, a: Approval): InboxItem {
  return {
    id: a.id,
    where: a.service as ServiceName,
    href: `/approvals/${a.service}/${a.id}`,
    what: approvalText(who.lang, a),
    maker: a.maker,
    own: samePerson(a.maker, who.operator.email),
    createdAt: a.createdAt ? timestampDate(a.createdAt) : new Date(0),
    expiresAt: a.expiresAt ? timestampDate(a.expiresAt) : new Date(0),
    status: approvalStatusFromProto(a.status) ?? "unknown",
  };
}

/**
 * The inbox: every service's approvals (each serves its own ApprovalService) and, for an admin,
 * the console's own account changes, in one list, newest first. `only` reads one service's (its
 * next page with `cursor`), without the console's.
 */
export async function readInbox(deps: ConsoleContext, who: SignedIn, status: StatusFilter, only?: ServiceName, cursor = ""): Promise<Inbox> {
  const answers = await Promise.all(
    (only ? [only] : SERVICES).map(async (service) => {
      try {
        const page = await who.client(ApprovalService, service).listApprovals({ status: status === "all" ? ApprovalStatus.UNSPECIFIED : approvalStatusToProto(status), limit: PAGE_SIZE, cursor });
        return { service, approvals: page.approvals, next: page.nextCursor };
      } catch (err) {
        return { service, refusal: refusalOf(err, who.t) };
      }
    }),
  );
  const accounts = only ? [] : await accountInboxItems(deps, who, status);
  const items = [...answers.flatMap((a) => (a.approvals ?? []).map((x) => serviceItem(who, x))), ...accounts].sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1));
  const failures = answers.flatMap((a) => (a.refusal ? [{ service: a.service, refusal: a.refusal }] : []));
  return {
    items,
    more: answers.filter((a) => a.next).map((a) => ({ service: a.service, cursor: a.next ?? "" })),
    failures,
    worst: failures.length === answers.length ? (failures[0]?.refusal.status ?? 200) : 200,
  };
}

/**
 * When each thing that waits for a second person was asked, for the home page's "Approvals
 * waiting" row: the five services' pending approvals and, for an admin (who alone decides them),
 * the console's pending account changes; `more` when a service had more than it read.
 */
export async function waitingStamps(deps: ConsoleContext, who: SignedIn): Promise<{ stamps: Array<Timestamp | undefined>; more: boolean }> {
  const pages = await Promise.all(SERVICES.map((s) => who.client(ApprovalService, s).listApprovals({ status: ApprovalStatus.PENDING, limit: 100 })));
  const accounts = roleAtLeast(who.operator.role, "admin") ? await listApprovals(deps.db, { status: "pending", now: nowMs(deps), limit: ACCOUNT_READ + 1 }) : [];
  return {
    stamps: [...pages.flatMap((p) => p.approvals.map((a) => a.createdAt)), ...accounts.slice(0, ACCOUNT_READ).map((a) => timestampFromMs(a.requestedAt))],
    more: pages.some((p) => p.nextCursor !== "") || accounts.length > ACCOUNT_READ,
  };
}
