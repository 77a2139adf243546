import type { ConnectRouter } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import type { MerchantContext } from "../context.js";
import { createApiKey } from "./create-api-key.js";
import { createMerchant } from "./create-merchant.js";
import { getCallbackTarget } from "./get-callback-target.js";
import { getCredentials } from "./get-credentials.js";
import { getMerchant } from "./get-merchant.js";
import { listApiKeys } from "./list-api-keys.js";
import { listMerchants } from "./list-merchants.js";
import { revokeApiKey } from "./revoke-api-key.js";
import { revokeSecret } from "./revoke-secret.js";
import { rotateSecret } from "./rotate-secret.js";
import { rotateWebhookSecret } from "./rotate-webhook-secret.js";
import { setAllowedIps } from "./set-allowed-ips.js";
import { setApiKeyTrusted } from "./set-api-key-trusted.js";
import { setCallbackUrl } from "./set-callback-url.js";
import { setDisplayName } from "./set-display-name.js";
import { setPaymentRules } from "./set-payment-rules.js";
import { setRateLimit } from "./set-rate-limit.js";
import { setSandbox } from "./set-sandbox.js";
import { setStatus } from "./set-status.js";
import { setWithdrawalApproval } from "./set-withdrawal-approval.js";

export function routes(router: ConnectRouter, ctx: MerchantContext): void {
  router.service(MerchantService, {
    ...createMerchant(ctx),
    ...getMerchant(ctx),
    ...listMerchants(ctx),
    ...rotateSecret(ctx),
    ...createApiKey(ctx),
    ...listApiKeys(ctx),
    ...revokeApiKey(ctx),
    ...setApiKeyTrusted(ctx),
    ...rotateWebhookSecret(ctx),
    ...revokeSecret(ctx),
    ...setAllowedIps(ctx),
    ...setCallbackUrl(ctx),
    ...setDisplayName(ctx),
    ...setStatus(ctx),
    ...setSandbox(ctx),
    ...setRateLimit(ctx),
    ...setPaymentRules(ctx),
    ...setWithdrawalApproval(ctx),
    ...getCredentials(ctx),
    ...getCallbackTarget(ctx),
  });
}
