/**
 * Bank feeds: adapters from what banks and aggregators deliver (MT940 statements, a signed
 * JSON push) to IncomingTransferRecord. Pure: recording and matching are the service's.
 */
export * from "./types.js";
export { decodeStatement, DERIVED_ID_PREFIX, derivedTransactionId, joinWrapped, MT940_LINE_WIDTH, mt940Adapter, parseMt940, senderOf } from "./mt940.js";
export {
  FEED_MAX_TRANSFERS,
  FEED_SIGNATURE_HEADER,
  FEED_SIGNATURE_TOLERANCE_SECONDS,
  FEED_TIMESTAMP_HEADER,
  jsonFeedAdapter,
  parseJsonFeed,
  signFeedBody,
  validateFeedBody,
  verifyFeedSignature,
  type SignatureCheck,
} from "./json-feed.js";
