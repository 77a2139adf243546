import type { LoadPlan, Merchant } from "./load.js";

/**
 * The request plans of the load scenarios. Requests go round-robin over the merchants; every
 * POST carries a processId of its own (`<tag>-<merchant index>-<n>`), so none is a duplicate.
 */

/** A valid Turkish IBAN (ISO 13616 checksum) that the sandbox bank completes. */
export const WITHDRAW_IBAN = "TR330006100519786457841326";

function roundRobin(merchants: readonly Merchant[]): () => { merchant: Merchant; index: number; n: number } {
  let n = 0;
  return () => {
    const index = n % merchants.length;
    return { merchant: merchants[index]!, index, n: n++ };
  };
}

export function banksPlan(merchants: readonly Merchant[]): LoadPlan {
  const next = roundRobin(merchants);
  return { method: "GET", next: () => ({ path: "/v1/available-banks", body: "", merchant: next().merchant }) };
}

const TRANSACTION_ID = /"transactionId":"([^"]+)"/;
const PROCESS_ID = /"processId":"[^"]*-(\d+)-\d+"/;

/**
 * POST /v1/deposit. `created(index, id)` gets the id of every deposit answered 201, with the
 * index of its merchant (read back from the processId in the answer).
 */
export function depositPlan(merchants: readonly Merchant[], tag: string, created?: (merchantIndex: number, id: string) => void): LoadPlan {
  const next = roundRobin(merchants);
  return {
    method: "POST",
    next: () => {
      const { merchant, index, n } = next();
      const body = JSON.stringify({ processId: `${tag}-${index}-${n}`, amount: 50_000, customer: { id: `cus_${n}`, name: "Ayşe Yılmaz", username: "ayse" } });
      return { path: "/v1/deposit", body, merchant };
    },
    ...(created
      ? {
          onResponse(status: number, body: string) {
            if (status !== 201) return;
            const id = TRANSACTION_ID.exec(body)?.[1];
            const index = PROCESS_ID.exec(body)?.[1];
            if (id && index !== undefined) created(Number(index), id);
          },
        }
      : {}),
  };
}

/** GET /v1/deposit/{id}: each merchant reads its own deposits, in turn. */
export function depositGetPlan(merchants: readonly Merchant[], idsByMerchant: ReadonlyArray<readonly string[]>): LoadPlan {
  const next = roundRobin(merchants);
  return {
    method: "GET",
    next: () => {
      const { merchant, index, n } = next();
      const ids = idsByMerchant[index] ?? [];
      const id = ids.length > 0 ? ids[Math.floor(n / merchants.length) % ids.length]! : "dep_missing";
      return { path: `/v1/deposit/${encodeURIComponent(id)}`, body: "", merchant };
    },
  };
}

/** POST /v1/withdraw of 1.00 TRY to a valid IBAN. */
export function withdrawPlan(merchants: readonly Merchant[], tag: string): LoadPlan {
  const next = roundRobin(merchants);
  return {
    method: "POST",
    next: () => {
      const { merchant, index, n } = next();
      const body = JSON.stringify({
        processId: `${tag}-${index}-${n}`,
        amount: 100,
        accountName: "Ali Veli",
        iban: WITHDRAW_IBAN,
        userId: `u${n}`,
        userName: "ali",
        name: "Ali Veli",
      });
      return { path: "/v1/withdraw", body, merchant };
    },
  };
}
