import { MerchantService } from "@payments/contracts/merchant";
import type { ServiceModule } from "@payments/kit";
import { migrations } from "./migrations/index.js";
import { createMerchantContext, type MerchantContext } from "./context.js";
import { routes } from "./routes/index.js";
import { merchantAccess } from "./access.js";

/** The merchant service: identity, API credentials, network rules and callback settings of every merchant. */
export const merchantModule: ServiceModule<MerchantContext> = {
  name: "merchant",
  services: [MerchantService],
  migrations,
  createContext: createMerchantContext,
  routes,
  access: merchantAccess,
};

export { loadMerchantConfig, merchantConfigSchema, type MerchantConfig, type MerchantContext } from "./context.js";
export { ipAllowed, normaliseAllowedIps, normaliseCallbackUrl, secretValidAt, type MerchantChange } from "./merchant.js";
export { migrations } from "./migrations/index.js";
