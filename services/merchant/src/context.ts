import { Code } from "@connectrpc/connect";
import { DepositService } from "@payments/contracts/deposit";
import { PayoutService } from "@payments/contracts/payout";
import { envVar, loadConfig, serviceError, type BaseContext, type Env } from "@payments/kit";
import type { ActivitySources } from "./merchant-activity.js";
import { z } from "zod";
import { createSecretBox, parseMasterKey, type SecretBox } from "./secret-box.js";

const MASTER_KEY_HELP = "32 bytes as 64 hex characters or base64 (generate one with `openssl rand -hex 32`)";

/** The merchant service's own settings, on top of the kit's base settings. */
export const merchantConfigSchema = z.object({
  MASTER_KEY: z.string({ error: `is required: ${MASTER_KEY_HELP}` }).transform((text, ctx) => {
    const key = parseMasterKey(text);
    if (!key) {
      ctx.addIssue({ code: "custom", message: `must be ${MASTER_KEY_HELP}` });
      return z.NEVER;
    }
    return key;
  }),
  /** How long a rotated-out secret keeps verifying when the rotation does not say. */
  SECRET_GRACE_PERIOD: envVar.duration("24h"),
  /** Accept callback URLs on private, loopback and link-local addresses (development and tests only), as the callback-sender's setting of the same name. */
  CALLBACK_ALLOW_PRIVATE: envVar.flag(false),
});
export type MerchantConfig = z.infer<typeof merchantConfigSchema>;

export interface MerchantContext extends BaseContext {
  /** The parsed settings, without the master key: that stays inside secretBox. */
  config: Omit<MerchantConfig, "MASTER_KEY">;
  secretBox: SecretBox;
  /** The deposit and payout services, asked before a merchant switches between sandbox and live. */
  activity: ActivitySources;
}

export function loadMerchantConfig(env: Env): MerchantConfig {
  return loadConfig(merchantConfigSchema, env);
}

export function createMerchantContext(base: BaseContext): MerchantContext {
  const { MASTER_KEY, ...config } = loadMerchantConfig(base.env);
  return { ...base, config, secretBox: createSecretBox(MASTER_KEY), activity: activitySources(base) };
}

/**
 * Made on first use: only SetSandbox needs them, so a merchant service deployed without
 * DEPOSIT_SERVICE_URL and PAYOUT_SERVICE_URL still serves everything else, and refuses a
 * switch it cannot check rather than allowing it.
 */
function activitySources(base: BaseContext): ActivitySources {
  const lazily = <T>(make: () => T): (() => T) => {
    let made: T | undefined;
    return () => {
      try {
        made ??= make();
      } catch (err) {
        throw serviceError(Code.FailedPrecondition, "SANDBOX_CHANGE_UNCHECKED", `cannot check the merchant's transactions: ${(err as Error).message}`);
      }
      return made;
    };
  };
  return {
    deposits: lazily(() => base.client(DepositService, "deposit")),
    payouts: lazily(() => base.client(PayoutService, "payout")),
  };
}
