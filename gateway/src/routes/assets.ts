import type { Client } from "@connectrpc/connect";
import type { Bank, BankCatalogService } from "@payments/contracts/bank-catalog";
import type { Clock } from "@payments/kit";
import { bankTileSvg } from "../bank-tile.js";
import { ApiError } from "../errors.js";
import type { Route } from "./route.js";

type BankLister = Pick<Client<typeof BankCatalogService>, "listBanks">;

/** The whole bank list, fetched at most once per TTL however many logos are requested. */
function bankDirectory(bankCatalog: BankLister, clock: Clock, ttlMs: number): (code: string) => Promise<Bank | undefined> {
  let cached: { byCode: Map<string, Bank>; expiresAt: number } | undefined;
  let pending: Promise<Map<string, Bank>> | undefined;
  const load = async (): Promise<Map<string, Bank>> => {
    const res = await bankCatalog.listBanks({});
    const byCode = new Map(res.banks.map((bank) => [bank.code, bank]));
    cached = { byCode, expiresAt: clock.now().getTime() + ttlMs };
    return byCode;
  };
  return async (code) => {
    if (cached && cached.expiresAt > clock.now().getTime()) return cached.byCode.get(code);
    pending ??= load().finally(() => {
      pending = undefined;
    });
    return (await pending).get(code);
  };
}

/** GET /assets/banks/:code.svg: a generated logo tile, public and cacheable, for banks without their own logo. */
export function assets(deps: { bankCatalog: BankLister; clock: Clock; cacheTtlMs: number }): Route[] {
  const findBank = bankDirectory(deps.bankCatalog, deps.clock, deps.cacheTtlMs);
  return [
    {
      method: "GET",
      path: "/assets/banks/:code.svg",
      access: "public",
      handler: async (ctx) => {
        const code = ctx.params.code ?? "";
        const bank = await findBank(code);
        if (!bank) throw new ApiError(404, "NOT_FOUND", "No bank with this code");
        ctx.set("Cache-Control", "public, max-age=86400");
        ctx.set("X-Content-Type-Options", "nosniff");
        ctx.set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
        ctx.type = "image/svg+xml; charset=utf-8";
        ctx.body = bankTileSvg(bank);
      },
    },
  ];
}
