import type { Client } from "@connectrpc/connect";
import type { AvailableBank, BankCatalogService, ListAvailableBanksResponse } from "@payments/contracts/bank-catalog";
import type { Clock } from "@payments/kit";
import { successJson } from "../envelope.js";
import { authenticatedMerchant, type Route } from "./route.js";
import { SCOPES } from "../key-scopes.js";

/** A bank entry of api.md; `logo` is absent on the FAST entry only. */
export interface PublicBank {
  _id: string;
  name: string;
  code: string;
  minAmount: number;
  maxAmount: number;
  logo?: string;
}

/** Amounts are int64 kuruş; JSON numbers are exact only up to 2^53, so anything beyond is a bug, not a value to round. */
function amount(value: bigint): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`amount ${value} cannot be sent as a JSON number`);
  return Number(value);
}

/** Absolute logo URL: a catalog path is served by this gateway; a missing or odd one falls back to the generated tile. */
export function logoUrl(bank: Pick<AvailableBank, "logoUrl" | "code">, publicBaseUrl: string): string {
  const logo = bank.logoUrl.trim();
  if (/^https?:\/\//i.test(logo)) return logo;
  if (logo.startsWith("/") && !logo.startsWith("//")) return `${publicBaseUrl}${logo}`;
  return `${publicBaseUrl}/assets/banks/${encodeURIComponent(bank.code)}.svg`;
}

function publicBanks(res: ListAvailableBanksResponse, publicBaseUrl: string): PublicBank[] {
  const banks: PublicBank[] = res.banks
    // "FAST" is reserved for the single FAST entry below.
    .filter((bank) => bank.id !== "FAST")
    .map((bank) => ({
      _id: bank.id,
      name: bank.name,
      code: bank.code,
      minAmount: amount(bank.minAmount),
      maxAmount: amount(bank.maxAmount),
      logo: logoUrl(bank, publicBaseUrl),
    }));
  if (res.fast) {
    banks.push({ _id: "FAST", name: "FAST", code: "FAST", minAmount: amount(res.fast.minAmount), maxAmount: amount(res.fast.maxAmount) });
  }
  return banks;
}

export function availableBanks(deps: { bankCatalog: Pick<Client<typeof BankCatalogService>, "listAvailableBanks">; clock: Clock; publicBaseUrl: string }): Route[] {
  const rendered = new WeakMap<ListAvailableBanksResponse, string>();
  return [
    {
      method: "GET",
      path: "/v1/available-banks",
      access: "merchant",
      // Any key: the bank list is what every integration starts with.
      scopes: SCOPES.anyKey,
      handler: async (ctx) => {
        const merchant = authenticatedMerchant(ctx);
        // FAST is offered only when an account of the merchant's kind (sandbox or live) takes it.
        const res = await deps.bankCatalog.listAvailableBanks({ merchantId: merchant.merchantId, sandbox: merchant.sandbox });
        // The catalog cache hands out the same answer until the catalog changes: its JSON is
        // made once and only the envelope's timestamp is new on each request.
        let data = rendered.get(res);
        if (data === undefined) {
          data = JSON.stringify({ banks: publicBanks(res, deps.publicBaseUrl) });
          rendered.set(res, data);
        }
        ctx.type = "application/json";
        ctx.body = successJson(data, deps.clock);
      },
    },
  ];
}
