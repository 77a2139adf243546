import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import { type Clock, type CommitParticipant, serviceError } from "@payments/kit";
import { appendAudit, isReplayedAssertion, type AuditEntry } from "./operator-audit.js";

/** What a second use of a mutating call's assertion is answered; nothing it asked is done. */
export function assertionReplayed(): ReturnType<typeof serviceError> {
  return serviceError(Code.Unauthenticated, "ASSERTION_REPLAYED", "this operator assertion was used already: a call that changes anything needs an assertion of its own");
}

/**
 * The audit row of one call, written with the change the call makes (the kit's commit
 * participant): the first transaction of the service's database that changes something appends
 * the row just before its COMMIT, so the two commit together or not at all. A transaction rolled
 * back takes its row with it, and the next one (a retried attempt) writes it again. When the call
 * ends, `close` says whether a row committed; if none did (refused, failed before writing, a
 * read, a change made outside a transaction) the interceptor writes it then.
 */
export class CallAudit implements CommitParticipant {
  private state: "open" | "writing" | "taken" | "closed" = "open";
  private id: string | undefined;
  /** The row could not be written because its assertion's jti is in the audit already: the call must be answered ASSERTION_REPLAYED. */
  replayed = false;

  /** `entry`: the row, as of when a transaction commits the change (outcome `ok`). */
  constructor(
    private readonly db: Knex,
    private readonly clock: Clock,
    private readonly entry: () => AuditEntry,
  ) {}

  async beforeCommit(trx: Knex.Transaction, db: Knex): Promise<boolean> {
    // Another database's transaction (an in-process call to another module) is not this call's change.
    if (this.state !== "open" || db !== this.db) return false;
    this.state = "writing";
    try {
      this.id = await appendAudit(trx, this.clock, this.entry());
      return true;
    } catch (err) {
      this.state = "open";
      if (!isReplayedAssertion(err)) throw err;
      // Another call committed a change with this assertion first: this one's change rolls back.
      this.replayed = true;
      throw assertionReplayed();
    }
  }

  committed(): void {
    if (this.state === "writing") this.state = "taken";
  }

  rolledBack(): void {
    if (this.state !== "writing") return;
    this.state = "open";
    this.id = undefined;
  }

  /** Ends the call: no later transaction carries its row. The id of the row that committed with its change, if one did. */
  close(): string | undefined {
    const id = this.state === "taken" ? this.id : undefined;
    this.state = "closed";
    return id;
  }
}
