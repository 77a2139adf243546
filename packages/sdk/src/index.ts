/**
 * @payments/sdk: the payments gateway's merchant API for Node 20+, signed, retried and typed
 * from the gateway's OpenAPI document. Callback verification comes from @payments/signing and
 * is re-exported here so a merchant installs one package.
 */
export { PaymentsClient, SandboxApi, type PaymentsClientOptions, type CallOptions, type StatementFile } from "./client.js";
export { PaymentsError } from "./errors.js";
export type { Paginated } from "./pages.js";
export type { FetchLike } from "./transport.js";
export { parseRetryAfter } from "./retry.js";
export type * from "./types.js";
export type { paths, components, operations } from "./openapi.js";
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
  verifyStandardWebhook,
  type StandardWebhookRefusalReason,
  type StandardWebhookVerificationResult,
  type VerifyStandardWebhookOptions,
} from "@payments/signing";
