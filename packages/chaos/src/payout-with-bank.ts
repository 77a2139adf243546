// The payout service as deployed (its compiled dist/, started by runService like
// services/payout/dist/main.js), with the one thing a deployment plugs in itself: the live
// bank connector, here one that calls the chaos run's bank at CHAOS_BANK_URL over HTTP.
// Run without the "source" export condition, so every workspace package is its dist/.
import { runService } from "@payments/access";
import { createPayoutModule, type BankConnector, type PayoutInstruction, type PayoutResult } from "@payments/payout-service";

const bankUrl = process.env.CHAOS_BANK_URL;
if (!bankUrl) throw new Error("CHAOS_BANK_URL is required");

const connector: BankConnector = {
  name: "chaos-bank",
  async send(instruction: PayoutInstruction): Promise<PayoutResult> {
    // Throwing means "no answer": the worker sends again later with the same key.
    const res = await fetch(`${bankUrl}/transfers`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(instruction),
      signal: AbortSignal.timeout(5_000),
    });
    if (res.status !== 200) throw new Error(`the bank answered ${res.status}`);
    return (await res.json()) as PayoutResult;
  },
};

await runService(createPayoutModule({ liveConnector: connector }));
