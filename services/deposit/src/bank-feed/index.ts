/**
 * Bank feeds: adapters from what banks and aggregators deliver (MT940 statements, ISO 20022
 * camt.053 statements and camt.054 notifications, a signed JSON push) to
 * IncomingTransferRecord. Pure: recording and matching are the service's. The two ways feeds
 * arrive, dir.ts (BANK_FEED_DIR) and http.ts (the signed push route), record what these parse
 * and are imported by path, not exported here.
 */
export * from "./types.js";
export { decodeStatement, DERIVED_ID_PREFIX, derivedTransactionId, joinWrapped, MT940_LINE_WIDTH, mt940Adapter, parseMt940, senderOf } from "./mt940.js";
export {
  CAMT_DERIVED_ID_PREFIX,
  CAMT_MAX_BYTES,
  CAMT_MESSAGE_IDS,
  camt053Adapter,
  camt054Adapter,
  camtCompleteness,
  camtFormatOf,
  derivedCamtTransactionId,
  parseCamt053,
  parseCamt054,
  type CamtFormat,
} from "./camt.js";
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
