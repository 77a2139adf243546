/**
 * @payments/signing: the HMAC-SHA256 scheme of the payments API. The gateway verifies
 * requests with it, the CLI and merchants sign requests with it, and merchants verify
 * callbacks with `verifyCallback`.
 */
export { sign, verify, unixTimestamp, signedHeaders, type SignedParts } from "./signing.js";
export {
  verifyCallback,
  isCallbackEventType,
  CALLBACK_EVENT_TYPES,
  CALLBACK_REFUSAL_REASONS,
  DEFAULT_CALLBACK_TOLERANCE_SECONDS,
  type CallbackEventType,
  type CallbackEvent,
  type CallbackData,
  type CallbackRefusalReason,
  type CallbackVerificationResult,
  type VerifyCallbackOptions,
  type HeadersLike,
  type HeadersRecord,
} from "./callback.js";
export {
  verifyStandardWebhook,
  standardWebhookHeaders,
  standardWebhookSignature,
  webhookSecretKey,
  WEBHOOK_SECRET_PREFIX,
  type StandardWebhookRefusalReason,
  type StandardWebhookVerificationResult,
  type VerifyStandardWebhookOptions,
} from "./standard-webhooks.js";
