import { z } from "zod";
import type { BankCatalogContext } from "../context.js";
import { resolveAvailableCatalog } from "../limits.js";
import { merchantId, parseRequest } from "../requests.js";
import { bankFromRow, fastFromRow, getFastSettingsRow, hasActiveFastAccount, listBankRows, listMerchantLimitRows, overrideFromRow } from "../store.js";
import type { Rpc } from "./index.js";

const request = z.object({ merchantId, sandbox: z.boolean() });

export function listAvailableBanks(ctx: BankCatalogContext): Rpc<"listAvailableBanks"> {
  return {
    async listAvailableBanks(req) {
      const { merchantId, sandbox } = parseRequest(request, req);
      const [banks, fast, overrides, hasFastAccount] = await Promise.all([
        listBankRows(ctx.db, { activeOnly: true }),
        getFastSettingsRow(ctx.db),
        listMerchantLimitRows(ctx.db, merchantId),
        hasActiveFastAccount(ctx.db, sandbox),
      ]);
      const catalog = resolveAvailableCatalog({
        banks: banks.map(bankFromRow),
        fast: fastFromRow(fast),
        overrides: overrides.map(overrideFromRow),
        hasFastAccount,
      });
      return {
        banks: catalog.banks.map((b) => ({
          id: b.id,
          name: b.name,
          code: b.code,
          logoUrl: b.logoUrl,
          minAmount: BigInt(b.minAmount),
          maxAmount: BigInt(b.maxAmount),
        })),
        fast: catalog.fast && { minAmount: BigInt(catalog.fast.minAmount), maxAmount: BigInt(catalog.fast.maxAmount) },
      };
    },
  };
}
