import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { displayNameInput, merchantIdInput } from "../merchant.js";
import { changeMerchant } from "../store.js";

const setDisplayNameInput = z.object({ merchantId: merchantIdInput, displayName: displayNameInput });

/**
 * Sets the name the merchant's customers see on the checkout page, or clears it (empty) so
 * the merchant's name is shown again. The MerchantChanged event (`display_name`) goes out
 * with the change, so the deposit service's cached merchant facts, which the checkout reads
 * the name from, are dropped at once.
 */
export function setDisplayName(ctx: MerchantContext): Rpc<typeof MerchantService, "setDisplayName"> {
  return {
    async setDisplayName(req) {
      const { merchantId, displayName } = parseRequest(setDisplayNameInput, req);
      const merchant = await changeMerchant(ctx, merchantId, "display_name", { display_name: displayName });
      return { merchant };
    },
  };
}
