import { Code, type Client } from "@connectrpc/connect";
import type { DepositService } from "@payments/contracts/deposit";
import type { PayoutService } from "@payments/contracts/payout";
import { errorInfo, serviceError, type Logger } from "@payments/kit";

/** The services that know whether a merchant has moved money, and fence their creations during a switch. */
export interface ActivitySources {
  deposits(): Client<typeof DepositService>;
  payouts(): Client<typeof PayoutService>;
}

/** How long a fence stands at a peer unless lowered first. */
export const MODE_FENCE_TTL_MS = 10_000;
/**
 * The flag flips only within this much of the raise being sent: the fence's expiry (TTL after
 * the peer raised it, by the peer's clock) is then still TTL − this away, room for the flip's
 * commit even when clocks run at slightly different rates.
 */
export const MODE_FENCE_FLIP_WITHIN_MS = MODE_FENCE_TTL_MS / 2;

/** The fences of one switch, raised at the deposit and payout services. */
export interface RaisedFences {
  /** Why the merchant may not switch (the first peer that said so), or undefined. */
  blocker?: string;
  /** The flag may flip only before this (merchant's clock, epoch ms). */
  deadline: number;
  /** Lowers every fence raised, recording the merchant's kind as it now is; never throws (expiry covers a lost one). */
  lower(sandbox: boolean): Promise<void>;
}

/**
 * Raises the merchant's mode fence at the deposit and payout services, both at once. Each
 * answers, from the same transaction that raised it, whether the merchant has transactions
 * there (deposits; withdrawals or a balance that is not zero). When a peer cannot be reached
 * (or refuses), the fences that were raised are lowered again and the switch fails:
 * SANDBOX_CHANGE_UNCHECKED (UNAVAILABLE), or the peer's MERCHANT_MODE_CHANGING when another
 * switch of the merchant is under way.
 */
export async function raiseModeFences(
  sources: ActivitySources,
  input: { merchantId: string; fenceId: string; sandbox: boolean; now: number },
  logger: Logger,
): Promise<RaisedFences> {
  const { merchantId, fenceId } = input;
  const deadline = input.now + MODE_FENCE_FLIP_WITHIN_MS;
  const peers = [
    { name: "deposit", raise: () => sources.deposits().raiseModeFence({ merchantId, fenceId, ttlMs: MODE_FENCE_TTL_MS }), lower: (sandbox: boolean) => sources.deposits().lowerModeFence({ merchantId, fenceId, sandbox }) },
    { name: "payout", raise: () => sources.payouts().raiseModeFence({ merchantId, fenceId, ttlMs: MODE_FENCE_TTL_MS }), lower: (sandbox: boolean) => sources.payouts().lowerModeFence({ merchantId, fenceId, sandbox }) },
  ];
  // Invoked inside a promise, so a client that cannot even be made (no *_SERVICE_URL) is a rejection like any other.
  const answers = await Promise.allSettled(peers.map(async (peer) => peer.raise()));
  const lower = async (sandbox: boolean) => {
    // Lower wherever the raise may have landed, even when its answer was lost.
    await Promise.all(
      peers.map(async (peer) => {
        try {
          await peer.lower(sandbox);
        } catch (err) {
          logger.warn({ err, merchantId, fenceId, service: peer.name }, "could not lower a merchant mode fence; it falls by itself when it expires");
        }
      }),
    );
  };
  const failed = answers.findIndex((a) => a.status === "rejected");
  if (failed !== -1) {
    await lower(input.sandbox);
    const err: unknown = (answers[failed] as PromiseRejectedResult).reason;
    const info = errorInfo(err);
    if (info.reason === "MERCHANT_MODE_CHANGING" || info.reason === "SANDBOX_CHANGE_UNCHECKED") throw err;
    throw serviceError(Code.Unavailable, "SANDBOX_CHANGE_UNCHECKED", `cannot fence the merchant's transactions at the ${peers[failed]!.name} service: ${info.message || String(err)}; nothing changed, retry`, { cause: err });
  }
  const blocker = answers.map((a) => (a.status === "fulfilled" ? a.value.blocker : "")).find((b) => b !== "");
  return { blocker, deadline, lower };
}

export function sandboxChangeRefused(merchantId: string, blocker: string) {
  return serviceError(
    Code.FailedPrecondition,
    "SANDBOX_CHANGE_REFUSED",
    `merchant ${merchantId} cannot switch between sandbox and live: ${blocker}; a merchant's kind can change only while it has no transactions and every balance is zero (create a new merchant instead)`,
  );
}

/** The switch took too long to flip within its fences: nothing changed. */
export function sandboxChangeTimedOut(merchantId: string) {
  return serviceError(Code.Unavailable, "SANDBOX_CHANGE_UNCHECKED", `merchant ${merchantId}: the switch between sandbox and live could not be made while its fences stood; nothing changed, retry`);
}
