import { envVar, loadConfig, type BaseContext, type Env } from "@payments/kit";
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
});
export type MerchantConfig = z.infer<typeof merchantConfigSchema>;

export interface MerchantContext extends BaseContext {
  /** The parsed settings, without the master key: that stays inside secretBox. */
  config: Omit<MerchantConfig, "MASTER_KEY">;
  secretBox: SecretBox;
}

export function loadMerchantConfig(env: Env): MerchantConfig {
  return loadConfig(merchantConfigSchema, env);
}

export function createMerchantContext(base: BaseContext): MerchantContext {
  const { MASTER_KEY, ...config } = loadMerchantConfig(base.env);
  return { ...base, config, secretBox: createSecretBox(MASTER_KEY) };
}
